import { fork, type ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..');
const READY_TIMEOUT_MS = 120_000;

export interface ServiceProcess {
  name: string;
  pid: number;
  /** Resident set size of the process, from /proc, right after a full garbage collection. */
  rssBytes(): Promise<number>;
  stop(): Promise<void>;
}

/**
 * Starts `apps/<app>/main.ts` as its own Node process, the way `npm run start:<app>` does but
 * without the npm and tsx wrapper processes, so its pid is the process whose memory we report.
 * Resolves once the app says it is ready (core/process/ready.ts).
 */
export async function startService(
  app: 'gateway' | 'worker',
  env: Record<string, string>,
): Promise<ServiceProcess> {
  const child: ChildProcess = fork(path.join(ROOT, 'apps', app, 'main.ts'), [], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    execArgv: ['--expose-gc', '--import', 'tsx', '--require', path.join(__dirname, 'gc-hook.cjs')],
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${app} not ready in ${READY_TIMEOUT_MS} ms`)),
      READY_TIMEOUT_MS,
    );
    child.once('message', (m) => {
      if (m !== 'ready') return;
      clearTimeout(timer);
      resolve();
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${app} exited with ${code} before it was ready`));
    });
  });
  const pid = child.pid as number;
  return {
    name: app,
    pid,
    async rssBytes() {
      await new Promise<void>((resolve) => {
        const onMessage = (m: unknown) => {
          if (m !== 'gc-done') return;
          child.off('message', onMessage);
          resolve();
        };
        child.on('message', onMessage);
        child.send('gc');
      });
      const status = await readFile(`/proc/${pid}/status`, 'utf8');
      const kb = /VmRSS:\s+(\d+) kB/.exec(status)?.[1];
      return Number(kb) * 1024;
    },
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}
