import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import {
  killTree,
  removeSettings,
  stackSettings,
  startReady,
  type Stack,
  type StackSettings,
} from './support';

const PASSWORD = 'correct horse battery staple';

// The quick start signs a newcomer up each time it is run: `npm start` must not refuse the
// eleventh in an hour (SIGN_UP_RATE_LIMIT_PER_HOUR's default is 10 per address, and every client
// of a stack on loopback is this machine), and each account must be able to pay for its tools.
describe('npm start: sign-ups on this machine (the real process tree)', function () {
  let stack: Stack | undefined;
  let settings: StackSettings | undefined;
  after(async () => {
    if (stack?.running()) await killTree(stack);
    if (settings) await removeSettings(settings);
  });

  it('signs a newcomer up as often as they run the quick start, each account with credits for the tools', async () => {
    settings = await stackSettings();
    // A first start builds the workflow bundle, which takes minutes on a loaded machine.
    stack = await startReady(settings, 'start', 600_000);
    const url = settings.url;
    const statuses: number[] = [];
    let last = '';
    for (let i = 0; i < 15; i++) {
      last = `newcomer-${randomUUID()}@example.test`;
      const res = await fetch(`${url}/api/auth/sign-up`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: last, password: PASSWORD }),
      });
      statuses.push(res.status);
    }
    assert.deepEqual(statuses, Array<number>(15).fill(201));
    const signIn = await fetch(`${url}/api/auth/sign-in`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: last, password: PASSWORD }),
    });
    assert.equal(signIn.status, 200);
    const cookie = (signIn.headers.get('set-cookie') ?? '').split(';')[0] as string;
    const session = (await (await fetch(`${url}/api/auth/session`, { headers: { cookie } })).json()) as {
      user: { creditBalance: string };
    };
    assert.equal(Number(session.user.creditBalance), 100);
  });
});
