import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { API_KEY_PATTERN, hashToken } from '../../core/auth/tokens';
import { createTestUser } from '../../testkit/users';
import { startGateway, type TestGateway } from '../../testkit/gateway';
import { testStack } from '../../testkit/stack';

const PASSWORD = 'correct horse battery staple';

async function count(sql: string, values: unknown[]): Promise<number> {
  const { db } = await testStack();
  const { rows } = await db.pool.query<{ n: string }>(`SELECT count(*) AS n FROM ${sql}`, values);
  return Number(rows[0]?.n);
}

function json(body: unknown, headers: Record<string, string> = {}) {
  return { headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) };
}

/** A fresh client address per test: the sign-in limiter counts per IP in the shared database. */
function clientIp(): string {
  return `10.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}`;
}

function sessionCookieOf(res: Response): string {
  const header = res.headers.get('set-cookie') ?? '';
  return header.split(';')[0] ?? '';
}

describe('identity', () => {
  let gateway: TestGateway;
  before(async () => {
    const stack = await testStack();
    gateway = await startGateway({ config: stack.config({ TRUST_PROXY: 'loopback' }) });
  });
  after(() => gateway.close());

  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${gateway.url}${path}`, {
      method: 'POST',
      ...json(body, { 'x-forwarded-for': clientIp(), ...headers }),
    });

  async function signUp(email = `u-${randomUUID()}@example.test`) {
    const res = await post('/api/auth/sign-up', { email, password: PASSWORD });
    assert.equal(res.status, 201);
    return { email, user: ((await res.json()) as { user: { id: string } }).user };
  }

  async function signIn(email: string, headers: Record<string, string> = {}) {
    const res = await post('/api/auth/sign-in', { email, password: PASSWORD }, headers);
    assert.equal(res.status, 200);
    return sessionCookieOf(res);
  }

  describe('POST /api/auth/sign-up', () => {
    it('creates a user with a lowercased email and an argon2id hash, never the password', async () => {
      const email = `Mixed-${randomUUID()}@Example.TEST`;
      const res = await post('/api/auth/sign-up', { email, password: PASSWORD });
      assert.equal(res.status, 201);
      const body = (await res.json()) as { user: { id: string; email: string; createdAt: string } };
      assert.deepEqual(Object.keys(body.user).sort(), ['createdAt', 'creditBalance', 'email', 'id']);
      assert.equal(body.user.email, email.toLowerCase());
      const { db } = await testStack();
      const row = await db.prisma.user.findUniqueOrThrow({ where: { id: body.user.id } });
      assert.match(row.passwordHash, /^\$argon2id\$/);
      assert.ok(!row.passwordHash.includes(PASSWORD));
    });

    it('answers 409 EMAIL_TAKEN for an email already registered, in any case', async () => {
      const { email } = await signUp();
      const res = await post('/api/auth/sign-up', { email: email.toUpperCase(), password: PASSWORD });
      assert.equal(res.status, 409);
      assert.equal(((await res.json()) as { code: string }).code, 'EMAIL_TAKEN');
      assert.equal(await count('"User" WHERE email = $1', [email]), 1);
    });

    it('answers 400 INVALID_REQUEST with details for a short password or bad email, writing nothing', async () => {
      const email = `short-${randomUUID()}@example.test`;
      const res = await post('/api/auth/sign-up', { email, password: 'short' });
      assert.equal(res.status, 400);
      const body = (await res.json()) as { code: string; details: { path: string }[] };
      assert.equal(body.code, 'INVALID_REQUEST');
      assert.deepEqual(
        body.details.map((d) => d.path),
        ['body.password'],
      );
      const bad = await post('/api/auth/sign-up', { email: 'not-an-email', password: PASSWORD });
      assert.equal(bad.status, 400);
      const long = await post('/api/auth/sign-up', { email, password: 'x'.repeat(201) });
      assert.equal(long.status, 400);
      assert.equal(await count('"User" WHERE email = $1', [email]), 0);
    });

    it('answers 403 FORBIDDEN to a cross-site request, writing nothing', async () => {
      const email = `xsite-${randomUUID()}@example.test`;
      const res = await post(
        '/api/auth/sign-up',
        { email, password: PASSWORD },
        { origin: 'https://evil.example' },
      );
      assert.equal(res.status, 403);
      assert.equal(((await res.json()) as { code: string }).code, 'FORBIDDEN');
      const fetchSite = await post(
        '/api/auth/sign-up',
        { email, password: PASSWORD },
        { 'sec-fetch-site': 'cross-site' },
      );
      assert.equal(fetchSite.status, 403);
      assert.equal(await count('"User" WHERE email = $1', [email]), 0);
    });

    it('answers 403 FORBIDDEN when ALLOW_SIGN_UP is false', async () => {
      const stack = await testStack();
      const closed = await startGateway({ config: stack.config({ ALLOW_SIGN_UP: 'false' }) });
      try {
        const email = `closed-${randomUUID()}@example.test`;
        const res = await fetch(`${closed.url}/api/auth/sign-up`, {
          method: 'POST',
          ...json({ email, password: PASSWORD }),
        });
        assert.equal(res.status, 403);
        assert.equal(((await res.json()) as { code: string }).code, 'FORBIDDEN');
        assert.equal(await count('"User" WHERE email = $1', [email]), 0);
      } finally {
        await closed.close();
      }
    });
  });

  describe('sign-up throttling', () => {
    const signUpFrom = (gw: TestGateway, ip: string, email = `t-${randomUUID()}@example.test`) =>
      fetch(`${gw.url}/api/auth/sign-up`, {
        method: 'POST',
        ...json({ email, password: PASSWORD }, { 'x-forwarded-for': ip }),
      });

    it('answers 429 once one address has used its sign-ups for the hour, taken emails included', async () => {
      const stack = await testStack();
      const limited = await startGateway({
        config: stack.config({ TRUST_PROXY: 'loopback', SIGN_UP_RATE_LIMIT_PER_HOUR: '3' }),
      });
      try {
        const ip = clientIp();
        const { email } = await signUp();
        // Probing taken emails counts like creating accounts: 409s are what an enumeration reads.
        for (let i = 0; i < 3; i++) assert.equal((await signUpFrom(limited, ip, email)).status, 409);
        const fresh = `late-${randomUUID()}@example.test`;
        const res = await signUpFrom(limited, ip, fresh);
        assert.equal(res.status, 429);
        assert.equal(((await res.json()) as { code: string }).code, 'RATE_LIMITED');
        assert.ok(Number(res.headers.get('retry-after')) > 0);
        assert.equal(await count('"User" WHERE email = $1', [fresh]), 0);
        assert.equal((await signUpFrom(limited, clientIp())).status, 201);
      } finally {
        await limited.close();
      }
    });

    it('answers 429 past the overall hourly sign-ups, whatever the addresses', async () => {
      const stack = await testStack();
      await stack.db.pool.query(`DELETE FROM "RateLimit" WHERE key = 'sign-up-all:all'`);
      const limited = await startGateway({
        config: stack.config({ TRUST_PROXY: 'loopback', SIGN_UP_RATE_LIMIT_OVERALL_PER_HOUR: '3' }),
      });
      try {
        for (let i = 0; i < 3; i++) assert.equal((await signUpFrom(limited, clientIp())).status, 201);
        assert.equal((await signUpFrom(limited, clientIp())).status, 429);
      } finally {
        await limited.close();
        await stack.db.pool.query(`DELETE FROM "RateLimit" WHERE key = 'sign-up-all:all'`);
      }
    });

    it('answers 503 with Retry-After when too many password hashes are already queued, writing nothing', async () => {
      const stack = await testStack();
      const busy = await startGateway({
        config: stack.config({
          TRUST_PROXY: 'loopback',
          PASSWORD_HASH_CONCURRENCY: '1',
          PASSWORD_HASH_QUEUE: '1',
        }),
      });
      try {
        const emails = Array.from({ length: 12 }, () => `burst-${randomUUID()}@example.test`);
        const answers = await Promise.all(emails.map((email) => signUpFrom(busy, clientIp(), email)));
        const refused = answers.filter((r) => r.status === 503);
        assert.ok(refused.length > 0, `statuses ${answers.map((r) => r.status).join(',')}`);
        assert.ok(answers.every((r) => r.status === 201 || r.status === 503));
        for (const res of refused) {
          assert.equal(((await res.json()) as { code: string }).code, 'SERVICE_UNAVAILABLE');
          assert.equal(res.headers.get('retry-after'), '1');
        }
        const created = answers.filter((r) => r.status === 201).length;
        assert.equal(await count('"User" WHERE email = ANY($1)', [emails]), created);
      } finally {
        await busy.close();
      }
    });
  });

  describe('POST /api/auth/sign-in', () => {
    it('sets an HttpOnly, SameSite=Lax session cookie whose token is stored only as a hash', async () => {
      const { email, user } = await signUp();
      const res = await post('/api/auth/sign-in', { email: email.toUpperCase(), password: PASSWORD });
      assert.equal(res.status, 200);
      assert.equal(((await res.json()) as { user: { id: string } }).user.id, user.id);
      const header = res.headers.get('set-cookie') ?? '';
      assert.match(header, /^svc_session=[\w-]{43}; /);
      assert.match(header, /; Max-Age=604800/);
      assert.match(header, /; Path=\//);
      assert.match(header, /; HttpOnly/);
      assert.match(header, /; SameSite=Lax/);
      assert.doesNotMatch(header, /Secure/);
      const token = sessionCookieOf(res).slice('svc_session='.length);
      assert.equal(await count('"Session" WHERE "tokenHash" = $1', [hashToken(token)]), 1);
      assert.equal(await count('"Session" WHERE "tokenHash" = $1', [token]), 0);
      const { db } = await testStack();
      const { rows } = await db.pool.query<{ secs: number }>(
        `SELECT extract(epoch FROM "expiresAt" - now())::int AS secs FROM "Session" WHERE "tokenHash" = $1`,
        [hashToken(token)],
      );
      assert.ok(Math.abs((rows[0]?.secs ?? 0) - 604800) < 60);
    });

    it('names the cookie __Host-svc_session, Secure, over https, and takes only that name there', async () => {
      const { email } = await signUp();
      const https = { 'x-forwarded-proto': 'https' };
      const res = await post('/api/auth/sign-in', { email, password: PASSWORD }, https);
      assert.equal(res.status, 200);
      const header = res.headers.get('set-cookie') ?? '';
      assert.match(header, /^__Host-svc_session=/);
      assert.match(header, /; Secure/);
      assert.match(header, /; Path=\//);
      assert.doesNotMatch(header, /Domain=/i);
      const cookie = sessionCookieOf(res);
      const session = (headers: Record<string, string>) =>
        fetch(`${gateway.url}/api/auth/session`, { headers });
      assert.equal((await session({ cookie, ...https })).status, 200);
      // A plain-named cookie (one a sibling subdomain or an http page could plant) is not read.
      const plain = cookie.replace(/^__Host-/, '');
      assert.equal((await session({ cookie: plain, ...https })).status, 401);
    });

    it('answers 401 with one message for a wrong password and for an unknown email', async () => {
      const { email } = await signUp();
      const wrong = await post('/api/auth/sign-in', { email, password: 'wrong password!' });
      const unknown = await post('/api/auth/sign-in', {
        email: `nobody-${randomUUID()}@example.test`,
        password: PASSWORD,
      });
      assert.equal(wrong.status, 401);
      assert.equal(unknown.status, 401);
      const [a, b] = [await wrong.json(), await unknown.json()];
      assert.deepEqual(a, b);
      assert.deepEqual(a, { error: 'The email or password is wrong.', code: 'UNAUTHORIZED' });
      assert.equal(wrong.headers.get('set-cookie'), null);
    });

    it('answers 401, not a server error, for an email of the longest allowed length', async () => {
      const email = `${'a'.repeat(64)}@${`${'b'.repeat(60)}.`.repeat(3)}test`;
      assert.equal(email.length, 252);
      const res = await post('/api/auth/sign-in', { email, password: PASSWORD });
      assert.equal(res.status, 401);
    });

    it('answers 403 to a cross-site sign-in', async () => {
      const { email } = await signUp();
      const res = await post(
        '/api/auth/sign-in',
        { email, password: PASSWORD },
        { origin: 'https://evil.example' },
      );
      assert.equal(res.status, 403);
      assert.equal(res.headers.get('set-cookie'), null);
    });

    describe('throttling', () => {
      let limited: TestGateway;
      let second: TestGateway;
      before(async () => {
        const stack = await testStack();
        const config = stack.config({ TRUST_PROXY: 'loopback', SIGN_IN_ATTEMPTS_PER_15_MINUTES: '3' });
        limited = await startGateway({ config });
        second = await startGateway({ config });
      });
      after(async () => {
        await limited.close();
        await second.close();
      });

      const attempt = (gw: TestGateway, email: string, password: string, ip: string) =>
        fetch(`${gw.url}/api/auth/sign-in`, {
          method: 'POST',
          ...json({ email, password }, { 'x-forwarded-for': ip }),
        });

      it('locks one address out of one account with 429 and Retry-After, across processes', async () => {
        const { email } = await signUp();
        const ip = clientIp();
        // Alternating gateways: the count lives in PostgreSQL.
        assert.equal((await attempt(limited, email, 'wrong password 1', ip)).status, 401);
        assert.equal((await attempt(second, email, 'wrong password 2', ip)).status, 401);
        assert.equal((await attempt(limited, email, 'wrong password 3', ip)).status, 401);
        const res = await attempt(second, email, PASSWORD, ip);
        assert.equal(res.status, 429);
        assert.equal(((await res.json()) as { code: string }).code, 'RATE_LIMITED');
        const retryAfter = Number(res.headers.get('retry-after'));
        assert.ok(retryAfter > 0 && retryAfter <= 900, `Retry-After ${retryAfter}`);
        assert.equal(res.headers.get('set-cookie'), null);
      });

      it('does not lock the owner out: another address still signs in to the account under attack', async () => {
        const { email } = await signUp();
        const attacker = clientIp();
        for (let i = 0; i < 3; i++)
          assert.equal((await attempt(limited, email, `wrong password ${i}`, attacker)).status, 401);
        assert.equal((await attempt(limited, email, PASSWORD, attacker)).status, 429);
        assert.equal((await attempt(second, email, PASSWORD, clientIp())).status, 200);
      });

      it('doubles the lockout each time the same address is locked out of the same account again', async () => {
        const { email } = await signUp();
        const ip = clientIp();
        const { db } = await testStack();
        const lockOut = async () => {
          for (let i = 0; i < 3; i++)
            assert.equal((await attempt(limited, email, `wrong password ${i}`, ip)).status, 401);
          const res = await attempt(limited, email, `wrong password 3`, ip);
          assert.equal(res.status, 429);
          return Number(res.headers.get('retry-after'));
        };
        const first = await lockOut();
        assert.ok(first > 0 && first <= 900, `first lockout ${first} s`);
        // The first lockout runs out (its counters expire; the count of lockouts stays).
        await db.pool.query(`UPDATE "RateLimit" SET expire = 0 WHERE key = ANY($1)`, [
          [`sign-in-ip:${ip}`, `sign-in-account-ip:${hashToken(`${email}\n${ip}`)}`],
        ]);
        const second = await lockOut();
        assert.ok(second > 900 && second <= 1800, `second lockout ${second} s`);
      });

      it('stops doubling the lockout at SIGN_IN_LOCKOUT_MAX', async () => {
        const stack = await testStack();
        const capped = await startGateway({
          config: stack.config({
            TRUST_PROXY: 'loopback',
            SIGN_IN_ATTEMPTS_PER_15_MINUTES: '3',
            SIGN_IN_LOCKOUT_MAX: '20m',
          }),
        });
        try {
          const { email } = await signUp();
          const ip = clientIp();
          const pairKey = `sign-in-account-ip:${hashToken(`${email}\n${ip}`)}`;
          const lockOut = async () => {
            for (let i = 0; i < 3; i++)
              assert.equal((await attempt(capped, email, `wrong password ${i}`, ip)).status, 401);
            const res = await attempt(capped, email, 'wrong password 3', ip);
            assert.equal(res.status, 429);
            return Number(res.headers.get('retry-after'));
          };
          const lockouts: number[] = [];
          for (let n = 0; n < 3; n++) {
            lockouts.push(await lockOut());
            await stack.db.pool.query(`UPDATE "RateLimit" SET expire = 0 WHERE key = ANY($1)`, [
              [`sign-in-ip:${ip}`, pairKey],
            ]);
          }
          const [first = 0, ...later] = lockouts;
          assert.ok(first > 0 && first <= 900, `first lockout ${first} s`);
          // Doubled, the second would be 30 and the third 60 minutes: both stop at 20.
          for (const seconds of later) assert.ok(seconds > 900 && seconds <= 1200, `lockouts ${lockouts}`);
        } finally {
          await capped.close();
        }
      });

      it('answers 429 once one address has used its attempts, whatever the emails', async () => {
        const ip = clientIp();
        for (let i = 0; i < 3; i++) {
          const res = await attempt(limited, `probe-${randomUUID()}@example.test`, PASSWORD, ip);
          assert.equal(res.status, 401);
        }
        const { email } = await signUp();
        const res = await attempt(second, email, PASSWORD, ip);
        assert.equal(res.status, 429);
        assert.ok(Number(res.headers.get('retry-after')) > 0);
      });

      it('keeps a client to the address its proxy saw, whatever X-Forwarded-For it forges', async () => {
        // TRUST_PROXY=1: one proxy in front, which appends the address it saw (here `ip`).
        const hops = await startGateway({
          config: (await testStack()).config({ TRUST_PROXY: '1', SIGN_IN_ATTEMPTS_PER_15_MINUTES: '3' }),
        });
        try {
          const ip = clientIp();
          for (let i = 0; i < 3; i++) {
            const res = await attempt(
              hops,
              `probe-${randomUUID()}@example.test`,
              PASSWORD,
              `${clientIp()}, ${ip}`,
            );
            assert.equal(res.status, 401);
          }
          const res = await attempt(
            hops,
            `probe-${randomUUID()}@example.test`,
            PASSWORD,
            `${clientIp()}, ${ip}`,
          );
          assert.equal(res.status, 429);
        } finally {
          await hops.close();
        }
      });

      it('does not count successful sign-ins against a shared address', async () => {
        const ip = clientIp();
        for (let i = 0; i < 5; i++) {
          const { email } = await signUp();
          assert.equal((await attempt(limited, email, PASSWORD, ip)).status, 200);
        }
      });

      it('forgets an email’s failed attempts after its owner signs in', async () => {
        const { email } = await signUp();
        assert.equal((await attempt(limited, email, 'wrong password 1', clientIp())).status, 401);
        assert.equal((await attempt(limited, email, 'wrong password 2', clientIp())).status, 401);
        assert.equal((await attempt(limited, email, PASSWORD, clientIp())).status, 200);
        assert.equal((await attempt(limited, email, 'wrong password 3', clientIp())).status, 401);
        assert.equal((await attempt(limited, email, PASSWORD, clientIp())).status, 200);
      });
    });
  });

  describe('sessions', () => {
    it('GET /api/auth/session answers the signed-in user, and 401 without a session', async () => {
      const { email, user } = await signUp();
      const cookie = await signIn(email);
      const res = await fetch(`${gateway.url}/api/auth/session`, { headers: { cookie } });
      assert.equal(res.status, 200);
      const body = (await res.json()) as { user: { id: string; email: string } };
      assert.equal(body.user.id, user.id);
      assert.equal(body.user.email, email);
      const none = await fetch(`${gateway.url}/api/auth/session`);
      assert.equal(none.status, 401);
      assert.equal(((await none.json()) as { code: string }).code, 'UNAUTHORIZED');
      const forged = await fetch(`${gateway.url}/api/auth/session`, {
        headers: { cookie: 'svc_session=forged' },
      });
      assert.equal(forged.status, 401);
    });

    it('refuses an expired session with 401', async () => {
      const { email } = await signUp();
      const cookie = await signIn(email);
      const { db } = await testStack();
      await db.pool.query(
        `UPDATE "Session" SET "expiresAt" = now() - interval '1 second' WHERE "tokenHash" = $1`,
        [hashToken(cookie.slice('svc_session='.length))],
      );
      const res = await fetch(`${gateway.url}/api/auth/session`, { headers: { cookie } });
      assert.equal(res.status, 401);
    });

    it('does not accept an API key as a session', async () => {
      const user = await createTestUser();
      const res = await fetch(`${gateway.url}/api/auth/session`, { headers: user.bearer });
      assert.equal(res.status, 401);
    });

    it('POST /api/auth/sign-out-everywhere ends every session of the user, and no one else’s', async () => {
      const { email } = await signUp();
      const here = await signIn(email);
      const there = await signIn(email);
      const other = await signIn((await signUp()).email);
      const res = await fetch(`${gateway.url}/api/auth/sign-out-everywhere`, {
        method: 'POST',
        headers: { cookie: here, origin: gateway.url },
      });
      assert.equal(res.status, 204);
      assert.match(res.headers.get('set-cookie') ?? '', /Max-Age=0/);
      const session = (cookie: string) => fetch(`${gateway.url}/api/auth/session`, { headers: { cookie } });
      assert.equal((await session(here)).status, 401);
      assert.equal((await session(there)).status, 401);
      assert.equal((await session(other)).status, 200);
    });

    it('POST /api/auth/sign-out deletes the session and clears the cookie', async () => {
      const { email } = await signUp();
      const cookie = await signIn(email);
      const res = await fetch(`${gateway.url}/api/auth/sign-out`, { method: 'POST', headers: { cookie } });
      assert.equal(res.status, 204);
      assert.match(
        res.headers.get('set-cookie') ?? '',
        /^svc_session=; Max-Age=0; Path=\/; HttpOnly; SameSite=Lax/,
      );
      assert.equal(
        await count('"Session" WHERE "tokenHash" = $1', [hashToken(cookie.slice('svc_session='.length))]),
        0,
      );
      const after = await fetch(`${gateway.url}/api/auth/session`, { headers: { cookie } });
      assert.equal(after.status, 401);
    });

    it('answers sign-out 401 without a session and 403 cross-site, keeping the session', async () => {
      const user = await createTestUser();
      const none = await fetch(`${gateway.url}/api/auth/sign-out`, { method: 'POST' });
      assert.equal(none.status, 401);
      const cross = await fetch(`${gateway.url}/api/auth/sign-out`, {
        method: 'POST',
        headers: { cookie: user.cookie, origin: 'https://evil.example' },
      });
      assert.equal(cross.status, 403);
      const still = await fetch(`${gateway.url}/api/auth/session`, { headers: { cookie: user.cookie } });
      assert.equal(still.status, 200);
    });
  });

  describe('API keys', () => {
    const keys = (cookie: string, init: RequestInit = {}, path = '') =>
      fetch(`${gateway.url}/api/keys${path}`, { ...init, headers: { cookie, ...(init.headers ?? {}) } });

    it('POST /api/keys answers 201 with the full key once, storing only its hash', async () => {
      const user = await createTestUser();
      const res = await keys(user.cookie, { method: 'POST', ...json({ name: 'CI' }) });
      assert.equal(res.status, 201);
      const body = (await res.json()) as Record<string, string | null>;
      assert.deepEqual(Object.keys(body).sort(), ['createdAt', 'id', 'key', 'lastUsedAt', 'name', 'prefix']);
      assert.equal(body.name, 'CI');
      assert.equal(body.lastUsedAt, null);
      assert.match(body.key ?? '', API_KEY_PATTERN);
      assert.equal(body.prefix, body.key?.slice(0, 14));
      const { db } = await testStack();
      const row = await db.prisma.apiKey.findUniqueOrThrow({ where: { id: body.id as string } });
      assert.equal(row.keyHash, hashToken(body.key as string));
      assert.equal(row.userId, user.userId);
      const use = await fetch(`${gateway.url}/api/v1/chats`, {
        headers: { authorization: `Bearer ${body.key}` },
      });
      assert.equal(use.status, 200);
    });

    it('answers 400 for a missing, empty, blank or too long name, writing nothing', async () => {
      const user = await createTestUser();
      const bodies = [{}, { name: '' }, { name: '\u000b' }, { name: ' \r\n\t' }, { name: 'x'.repeat(81) }];
      for (const body of [...bodies, { name: 'ok', extra: 1 }]) {
        const res = await keys(user.cookie, { method: 'POST', ...json(body) });
        assert.equal(res.status, 400, JSON.stringify(body));
        assert.equal(((await res.json()) as { code: string }).code, 'INVALID_REQUEST');
      }
      assert.equal(await count('"ApiKey" WHERE "userId" = $1', [user.userId]), 1);
      // White space around a name is not kept.
      const spaced = await keys(user.cookie, { method: 'POST', ...json({ name: ' \tlaptop \n' }) });
      assert.equal(spaced.status, 201);
      assert.equal(((await spaced.json()) as { name: string }).name, 'laptop');
    });

    it('refuses an API key and a cross-site request on /api/keys', async () => {
      const user = await createTestUser();
      const withKey = await fetch(`${gateway.url}/api/keys`, {
        method: 'POST',
        ...json({ name: 'nope' }, user.bearer),
      });
      assert.equal(withKey.status, 401);
      assert.equal((await fetch(`${gateway.url}/api/keys`, { headers: user.bearer })).status, 401);
      const cross = await keys(user.cookie, {
        method: 'POST',
        ...json({ name: 'nope' }, { origin: 'https://evil.example' }),
      });
      assert.equal(cross.status, 403);
      assert.equal(await count('"ApiKey" WHERE "userId" = $1', [user.userId]), 1);
    });

    it('GET /api/keys lists the caller’s active keys without the secret', async () => {
      const user = await createTestUser();
      const other = await createTestUser();
      const created = (await (
        await keys(user.cookie, { method: 'POST', ...json({ name: 'second' }) })
      ).json()) as {
        id: string;
      };
      const revoked = (await (
        await keys(user.cookie, { method: 'POST', ...json({ name: 'gone' }) })
      ).json()) as {
        id: string;
      };
      assert.equal((await keys(user.cookie, { method: 'DELETE' }, `/${revoked.id}`)).status, 204);
      const res = await keys(user.cookie);
      assert.equal(res.status, 200);
      const body = (await res.json()) as { data: Record<string, unknown>[]; nextCursor: null };
      assert.equal(body.nextCursor, null);
      assert.deepEqual(
        body.data.map((k) => k.id),
        [created.id, user.apiKeyId],
      );
      for (const k of body.data) {
        assert.deepEqual(Object.keys(k).sort(), ['createdAt', 'id', 'lastUsedAt', 'name', 'prefix']);
        assert.ok(!JSON.stringify(k).includes(user.apiKey));
      }
      assert.ok(!body.data.some((k) => k.id === other.apiKeyId));
    });

    it('GET /api/keys pages with limit and cursor, newest first', async () => {
      const user = await createTestUser();
      const made: string[] = [];
      for (let i = 0; i < 4; i++) {
        const res = await keys(user.cookie, { method: 'POST', ...json({ name: `k${i}` }) });
        made.push(((await res.json()) as { id: string }).id);
      }
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const res = await keys(user.cookie, {}, `?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
        assert.equal(res.status, 200);
        const body = (await res.json()) as { data: { id: string }[]; nextCursor: string | null };
        assert.ok(body.data.length <= 2);
        seen.push(...body.data.map((k) => k.id));
        cursor = body.nextCursor;
      } while (cursor);
      // Every key once, none twice across pages (keys made in one millisecond may swap places).
      assert.equal(seen.length, 5);
      assert.deepEqual(new Set(seen), new Set([...made, user.apiKeyId]));
      assert.equal(seen.at(-1), user.apiKeyId);
      assert.equal((await keys(user.cookie, {}, '?limit=0')).status, 400);
      assert.equal((await keys(user.cookie, {}, '?cursor=nope')).status, 400);
    });

    it('DELETE /api/keys/:keyId revokes a key; its very next public call gets 401', async () => {
      const user = await createTestUser();
      assert.equal((await fetch(`${gateway.url}/api/v1/chats`, { headers: user.bearer })).status, 200);
      const res = await keys(user.cookie, { method: 'DELETE' }, `/${user.apiKeyId}`);
      assert.equal(res.status, 204);
      const after = await fetch(`${gateway.url}/api/v1/chats`, { headers: user.bearer });
      assert.equal(after.status, 401);
      assert.equal(((await after.json()) as { code: string }).code, 'UNAUTHORIZED');
      const again = await keys(user.cookie, { method: 'DELETE' }, `/${user.apiKeyId}`);
      assert.equal(again.status, 404);
      assert.equal(((await again.json()) as { code: string }).code, 'KEY_NOT_FOUND');
    });

    it('answers 404 KEY_NOT_FOUND for another user’s key, which keeps working', async () => {
      const user = await createTestUser();
      const other = await createTestUser();
      const res = await keys(user.cookie, { method: 'DELETE' }, `/${other.apiKeyId}`);
      assert.equal(res.status, 404);
      assert.equal(((await res.json()) as { code: string }).code, 'KEY_NOT_FOUND');
      assert.equal(await count('"ApiKey" WHERE id = $1 AND "revokedAt" IS NULL', [other.apiKeyId]), 1);
      assert.equal((await fetch(`${gateway.url}/api/v1/chats`, { headers: other.bearer })).status, 200);
      const unknown = await keys(user.cookie, { method: 'DELETE' }, `/${randomUUID()}`);
      assert.equal(unknown.status, 404);
    });

    it('answers 400 INVALID_REQUEST for a key id that is not a UUID', async () => {
      const user = await createTestUser();
      const res = await keys(user.cookie, { method: 'DELETE' }, '/not-a-uuid');
      assert.equal(res.status, 400);
      const body = (await res.json()) as { code: string; details: { path: string }[] };
      assert.equal(body.code, 'INVALID_REQUEST');
      assert.equal(body.details[0]?.path, 'params.keyId');
    });

    it('refuses a session cookie on public routes', async () => {
      const user = await createTestUser();
      const res = await fetch(`${gateway.url}/api/v1/chats`, { headers: { cookie: user.cookie } });
      assert.equal(res.status, 401);
      assert.equal(((await res.json()) as { code: string }).code, 'UNAUTHORIZED');
    });
  });
});
