import type { ChildProcess } from 'node:child_process';

/** What a spawned process prints (stdout and stderr together), and a wait for a line of it. */
export interface WatchedOutput {
  output(): string;
  /** Resolves when the output matches; fails with the output when it does not in time. */
  waitForLine(pattern: RegExp, timeoutMs?: number): Promise<void>;
}

export function watchOutput(child: ChildProcess, name: string, defaultTimeoutMs: number): WatchedOutput {
  let output = '';
  const listeners = new Set<() => void>();
  const onData = (chunk: Buffer) => {
    output += chunk.toString('utf8');
    for (const listener of listeners) listener();
  };
  child.stdout?.on('data', onData);
  child.stderr?.on('data', onData);
  return {
    output: () => output,
    waitForLine(pattern, timeoutMs = defaultTimeoutMs) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (!pattern.test(output)) return;
          listeners.delete(check);
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(() => {
          listeners.delete(check);
          reject(new Error(`${name} never printed ${pattern}; it printed:\n${output.slice(-4000)}`));
        }, timeoutMs);
        listeners.add(check);
        check();
      });
    },
  };
}
