import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

const ROOT = path.resolve(__dirname, '../..');
/** An account without CAP_SYS_ADMIN, for a test that runs as root. */
const NOBODY = '65534';

describe('a background child’s session weight (apps/stack/process/priority.ts)', function () {
  it('lowers the session of every child started at once, for a user the kernel allows one change per 100 ms', async function () {
    // The kernel refuses a second autogroup change within 100 ms from a process without
    // CAP_SYS_ADMIN (EAGAIN): the stack starts several children within milliseconds.
    const script = ['--import', 'tsx', path.join(__dirname, 'autogroup-children.ts'), '4'];
    const [command, args] =
      process.getuid?.() === 0
        ? [
            'setpriv',
            [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', process.execPath, ...script],
          ]
        : [process.execPath, script];
    const { stdout } = await promisify(execFile)(command, args, {
      cwd: ROOT,
      env: { ...process.env, HOME: '/tmp' },
    });
    const { uid, answers, autogroups } = JSON.parse(stdout) as {
      uid: number;
      answers: boolean[];
      autogroups: string[];
    };
    assert.notEqual(uid, 0, 'the children were lowered by a user without CAP_SYS_ADMIN');
    assert.deepEqual(answers, [true, true, true, true]);
    if (existsSync('/proc/self/autogroup')) {
      for (const group of autogroups) assert.match(group, /^\/autogroup-\d+ nice 10$/);
    }
  });
});
