import { hash, verify } from '@node-rs/argon2';

/**
 * Argon2id (the library's default algorithm) with OWASP's minimum parameters: 19 MiB, 2 passes.
 * Spelled out so a library upgrade cannot weaken stored hashes silently.
 */
const PARAMS = { memoryCost: 19_456, timeCost: 2, parallelism: 1 };

export function hashPassword(password: string): Promise<string> {
  return hash(password, PARAMS);
}

let decoy: Promise<string> | undefined;

/**
 * Checks a password against a stored hash. With no user (unknown email) it verifies against a
 * decoy hash anyway, so both answers take as long and timing cannot tell which emails exist.
 */
export async function verifyPassword(storedHash: string | undefined, password: string): Promise<boolean> {
  if (storedHash === undefined) {
    decoy ??= hashPassword('decoy password that matches no account');
    await verify(await decoy, password).catch(() => false);
    return false;
  }
  // A hash that is not argon2 (a row written by a test or an import) matches no password.
  return verify(storedHash, password).catch(() => false);
}
