/**
 * The credits a new account starts with: none unless the operator says so, since a grant anyone
 * can sign up for is a grant anyone can farm; `npm start` gives 100, and lifts the per-address
 * sign-up limit for the one machine it listens on (test/lifecycle/embedded-sign-up.test.ts runs it).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { embeddedDefaults } from '../../apps/stack/defaults';
import { startGateway, type TestGateway } from '../../testkit/gateway';
import { testStack } from '../../testkit/stack';

const PASSWORD = 'correct horse battery staple';

describe('the sign-up grant', function () {
  this.timeout(60_000);
  let dir: string;
  const gateways: TestGateway[] = [];
  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'sign-up-grant-'));
  });
  after(async () => {
    for (const gateway of gateways) await gateway.close();
    await rm(dir, { recursive: true, force: true });
  });

  async function gatewayWith(overrides: Record<string, string>): Promise<TestGateway> {
    const gateway = await startGateway({ config: (await testStack()).config(overrides) });
    gateways.push(gateway);
    return gateway;
  }

  /** Signs up (from this machine) and in: the status of the sign-up, and the account's session. */
  async function newAccount(gateway: TestGateway): Promise<{ status: number; cookie?: string }> {
    const email = `grant-${randomUUID()}@example.test`;
    const post = (route: string) =>
      fetch(`${gateway.url}/api/auth/${route}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email, password: PASSWORD }),
      });
    const signedUp = await post('sign-up');
    if (signedUp.status !== 201) return { status: signedUp.status };
    const signedIn = await post('sign-in');
    assert.equal(signedIn.status, 200);
    return { status: 201, cookie: (signedIn.headers.get('set-cookie') ?? '').split(';')[0] };
  }

  const userOf = async (gateway: TestGateway, cookie: string) =>
    (
      (await (await fetch(`${gateway.url}/api/auth/session`, { headers: { cookie } })).json()) as {
        user: { id: string; creditBalance: string };
      }
    ).user;

  it('gives a new account nothing by default: its first paid tool call answers 402, writing nothing', async () => {
    const gateway = await gatewayWith({
      STORAGE_LOCAL_DIR: path.join(dir, 'default'),
      IMAGE_PROVIDER: 'local-preview',
    });
    const { cookie } = await newAccount(gateway);
    assert.ok(cookie);
    const user = await userOf(gateway, cookie);
    assert.equal(Number(user.creditBalance), 0);
    const key = await fetch(`${gateway.url}/api/keys`, {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'farm' }),
    });
    const apiKey = ((await key.json()) as { key: string }).key;
    const call = await fetch(`${gateway.url}/api/v1/tools/ai_image_2`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ prompt: 'free credits, please' }),
    });
    assert.equal(call.status, 402);
    assert.equal(((await call.json()) as { code: string }).code, 'INSUFFICIENT_CREDITS');
    const { rows } = await (
      await testStack()
    ).db.pool.query(`SELECT 1 FROM "ToolCall" WHERE "userId" = $1`, [user.id]);
    assert.equal(rows.length, 0);
  });

  it("as npm start sets it: an account gets 100 credits, and this machine's sign-ups are not held to 10 an hour", async () => {
    const gateway = await gatewayWith(
      embeddedDefaults({ host: '127.0.0.1', filesDir: path.join(dir, 'embedded') }),
    );
    const statuses: number[] = [];
    let last: { status: number; cookie?: string } = { status: 0 };
    for (let i = 0; i < 12; i++) {
      last = await newAccount(gateway);
      statuses.push(last.status);
    }
    assert.deepEqual(statuses, Array<number>(12).fill(201));
    assert.ok(last.cookie);
    assert.equal(Number((await userOf(gateway, last.cookie)).creditBalance), 100);
    // Listening beyond this machine, the service's own per-address limit holds.
    const exposed = embeddedDefaults({ host: '0.0.0.0', filesDir: path.join(dir, 'exposed') });
    assert.equal(exposed.SIGN_UP_RATE_LIMIT_PER_HOUR, undefined);
    assert.equal(exposed.CREDIT_GRANT_ON_SIGN_UP, '100');
  });
});
