/**
 * Run by priority.test.ts as a user without CAP_SYS_ADMIN: starts `COUNT` children in sessions of
 * their own at once, as the stack starts Temporal's services, lowers each one's session with
 * lowerAutogroup, and prints what each call answered and what the kernel then says of each.
 */
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { lowerAutogroup } from '../../apps/stack/process/priority';

async function main(): Promise<void> {
  const count = Number(process.argv[2]);
  const children = Array.from({ length: count }, () =>
    spawn('sleep', ['60'], { detached: true, stdio: 'ignore' }),
  );
  try {
    const answers = await Promise.all(children.map((c) => lowerAutogroup(c.pid as number, 10)));
    const autogroups = await Promise.all(
      children.map((c) =>
        readFile(`/proc/${c.pid}/autogroup`, 'utf8').then(
          (t) => t.trim(),
          () => null,
        ),
      ),
    );
    process.stdout.write(JSON.stringify({ uid: process.getuid?.(), answers, autogroups }));
  } finally {
    for (const c of children) c.kill();
  }
}

void main();
