/**
 * Per-address limits against a client that holds a whole IPv6 network: every per-address limit
 * counts a /64 as one address (through the trusted proxy's X-Forwarded-For, as behind a load
 * balancer), sign-ups also per /48, and a slow per-account ceiling on failed sign-ins that the
 * owner, from an address they signed in from before, does not feel.
 */
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import type { Config } from '../../core/config/config';
import { startGateway, type TestGateway } from '../../testkit/gateway';
import { freePort, testStack } from '../../testkit/stack';

const PASSWORD = 'correct horse battery';

/** A random group of four hex digits. */
const group = () => randomBytes(2).toString('hex');
/** A fresh /48 of the documentation range: `2001:db8:xxxx`. */
const network48 = () => `2001:db8:${group()}`;
/** A fresh /64 inside `network`. */
const network64 = (network = network48()) => `${network}:${group()}`;
/** A fresh address inside `network64`: what a host chooses for itself, anew at will. */
const addressIn = (prefix: string) => `${prefix}:${group()}:${group()}:${group()}:${group()}`;

describe('per-address limits count an IPv6 client by its /64', function () {
  this.timeout(60_000);
  const gateways: TestGateway[] = [];
  after(async () => {
    for (const gateway of gateways) await gateway.close();
    await resetOverall();
  });

  async function resetOverall() {
    await (await testStack()).db.pool.query(`DELETE FROM "RateLimit" WHERE key = 'sign-up-all:all'`);
  }

  /** A gateway behind a proxy on loopback, so the client address is what it forwards. */
  async function gatewayWith(overrides: Record<string, string>): Promise<TestGateway> {
    const port = await freePort();
    const config: Config = (await testStack()).config({
      TRUST_PROXY: 'loopback',
      PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
      ...overrides,
    });
    const gateway = await startGateway({ config, port });
    gateways.push(gateway);
    return gateway;
  }

  const post = (gateway: TestGateway, path: string, from: string, body: unknown) =>
    fetch(`${gateway.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': from },
      body: JSON.stringify(body),
    });
  const signUp = async (gateway: TestGateway, from: string, email = `v6-${randomUUID()}@example.test`) =>
    (await post(gateway, '/api/auth/sign-up', from, { email, password: PASSWORD })).status;
  const signIn = async (gateway: TestGateway, from: string, email: string, password: string) =>
    (await post(gateway, '/api/auth/sign-in', from, { email, password })).status;

  it('locks one /64 out of sign-ins, whatever addresses of it the attempts come from', async () => {
    const gateway = await gatewayWith({ SIGN_IN_ATTEMPTS_PER_15_MINUTES: '3' });
    const home = network64();
    const email = `target-${randomUUID()}@example.test`;
    assert.equal(await signUp(gateway, addressIn(network64()), email), 201);
    // Guesses at one account, each from a new address of the same /64: its pair is locked out.
    for (let i = 0; i < 3; i++)
      assert.equal(await signIn(gateway, addressIn(home), email, `wrong password ${i}`), 401, `guess ${i}`);
    assert.equal(await signIn(gateway, addressIn(home), email, 'wrong password again'), 429);
    // Guesses at many accounts from the /64: its address limit stops them.
    const sprayer = network64();
    for (let i = 0; i < 3; i++)
      assert.equal(
        await signIn(gateway, addressIn(sprayer), `x-${randomUUID()}@example.test`, 'a wrong guess'),
        401,
      );
    assert.equal(
      await signIn(gateway, addressIn(sprayer), `x-${randomUUID()}@example.test`, 'a wrong guess'),
      429,
    );
  });

  it('counts sign-ups per /64 and per /48 before the overall limit, so a flood cannot use the overall one up', async () => {
    await resetOverall();
    const gateway = await gatewayWith({
      SIGN_UP_RATE_LIMIT_PER_HOUR: '2',
      SIGN_UP_RATE_LIMIT_PER_NETWORK_PER_HOUR: '4',
      SIGN_UP_RATE_LIMIT_OVERALL_PER_HOUR: '6',
    });
    const site = network48();
    const flooding = network64(site);
    const statuses = [];
    for (let i = 0; i < 10; i++) statuses.push(await signUp(gateway, addressIn(flooding)));
    assert.deepEqual(statuses, [201, 201, ...Array<number>(8).fill(429)], 'the /64 holds two an hour');
    // The site's other /64s share its /48's four.
    const neighbour = network64(site);
    assert.deepEqual(
      [await signUp(gateway, addressIn(neighbour)), await signUp(gateway, addressIn(neighbour))],
      [201, 201],
    );
    assert.equal(await signUp(gateway, addressIn(network64(site))), 429, "the /48's share is used up");
    // What the site was refused did not count overall: others still sign up.
    assert.equal(await signUp(gateway, addressIn(network64())), 201);
    assert.equal(await signUp(gateway, '203.0.113.7'), 201);
  });

  it('refuses sign-ins to an account past SIGN_IN_FAILURES_PER_ACCOUNT_PER_HOUR from new addresses, not from the owner’s', async () => {
    const gateway = await gatewayWith({ SIGN_IN_FAILURES_PER_ACCOUNT_PER_HOUR: '5' });
    const email = `owner-${randomUUID()}@example.test`;
    const home = addressIn(network64());
    assert.equal(await signUp(gateway, home, email), 201);
    assert.equal(await signIn(gateway, home, email, PASSWORD), 200, 'the owner signs in from home');
    // Guesses from everywhere, each from a network of its own: no per-address limit trips.
    for (let i = 0; i < 5; i++)
      assert.equal(
        await signIn(gateway, addressIn(network64()), email, `a wrong guess ${i}`),
        401,
        `guess ${i}`,
      );
    // Past the ceiling a new address is refused before its password is checked: the right one
    // too, so a guess there tells nothing.
    const refused = await post(gateway, '/api/auth/sign-in', addressIn(network64()), {
      email,
      password: 'a wrong guess 6',
    });
    assert.equal(refused.status, 429);
    assert.equal(((await refused.json()) as { code: string }).code, 'RATE_LIMITED');
    assert.ok(Number(refused.headers.get('retry-after')) > 0);
    assert.equal(await signIn(gateway, addressIn(network64()), email, PASSWORD), 429);
    // The owner, from an address they signed in from, is neither refused nor counted.
    assert.equal(await signIn(gateway, home, email, 'a typo in it'), 401);
    assert.equal(await signIn(gateway, home, email, PASSWORD), 200);
    // Another account is not affected.
    const other = `other-${randomUUID()}@example.test`;
    assert.equal(await signUp(gateway, addressIn(network64()), other), 201);
    assert.equal(await signIn(gateway, addressIn(network64()), other, PASSWORD), 200);
  });
});
