import { hash, verify } from '@node-rs/argon2';

/**
 * Argon2id (the library's default algorithm) with OWASP's minimum parameters: 19 MiB, 2 passes.
 * Spelled out so a library upgrade cannot weaken stored hashes silently.
 */
const PARAMS = { memoryCost: 19_456, timeCost: 2, parallelism: 1 };

/** Thrown when every hashing slot is taken and the queue is full: the caller answers 503. */
export class PasswordHasherBusyError extends Error {
  constructor() {
    super('Every password-hashing slot is taken.');
    this.name = 'PasswordHasherBusyError';
  }
}

export interface PasswordHasher {
  hash(password: string): Promise<string>;
  /**
   * Checks a password against a stored hash. With no user (unknown email) it verifies against a
   * decoy hash anyway, so both answers take as long and timing cannot tell which emails exist.
   */
  verify(storedHash: string | undefined, password: string): Promise<boolean>;
}

/**
 * Argon2 costs 19 MiB and tens of milliseconds of CPU per call, so a burst of sign-ups or sign-ins
 * could take every core and a lot of memory. At most `concurrency` hashes run at once and at most
 * `queue` wait; past that a call fails at once with PasswordHasherBusyError instead of piling up.
 */
export function createPasswordHasher(limits: { concurrency: number; queue: number }): PasswordHasher {
  let running = 0;
  const waiting: (() => void)[] = [];

  async function inSlot<T>(work: () => Promise<T>): Promise<T> {
    if (running < limits.concurrency) running++;
    else if (waiting.length < limits.queue) await new Promise<void>((resolve) => waiting.push(resolve));
    else throw new PasswordHasherBusyError();
    try {
      return await work();
    } finally {
      // The slot passes straight to the next waiter, so `running` only drops when none waits.
      const next = waiting.shift();
      if (next) next();
      else running--;
    }
  }

  let decoy: Promise<string> | undefined;
  const hashPassword = (password: string) => inSlot(() => hash(password, PARAMS));

  return {
    hash: hashPassword,
    async verify(storedHash, password) {
      if (storedHash === undefined) {
        decoy ??= hash('decoy password that matches no account', PARAMS);
        const decoyHash = await decoy;
        await inSlot(() => verify(decoyHash, password).catch(() => false));
        return false;
      }
      // A hash that is not argon2 (a row written by a test or an import) matches no password.
      return inSlot(() => verify(storedHash, password).catch(() => false));
    },
  };
}
