import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  createGuardedHttp,
  type GuardedHttpOptions,
  type LookupFunction,
} from '../../core/net/guarded-http-client';
import { GuardedHttpError, type GuardedHttpErrorKind } from '../../core/net/guarded-http';
import { fetchMedia, MediaFetchError } from '../../core/net/fetch-media';
import { freePort } from '../../testkit/stack';

const baseConfig = {
  ALLOW_PRIVATE_NETWORK_URLS: false,
  OUTBOUND_CA_FILE: undefined,
  FETCH_TIMEOUT: 5_000,
  FETCH_MAX_BYTES: 10 * 1024 * 1024,
};

function guarded(allowPrivate: boolean, options: GuardedHttpOptions = {}) {
  return createGuardedHttp({ ...baseConfig, ALLOW_PRIVATE_NETWORK_URLS: allowPrivate }, options);
}

async function listen(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<{ server: Server; port: number }> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

async function rejectsWith(promise: Promise<unknown>, kind: GuardedHttpErrorKind): Promise<void> {
  await assert.rejects(promise, (err: unknown) => {
    assert.ok(err instanceof GuardedHttpError, `expected GuardedHttpError, got ${String(err)}`);
    assert.equal(err.kind, kind);
    return true;
  });
}

describe('guarded HTTP client', () => {
  let server: Server;
  let port: number;
  let hits = 0;
  const png = Buffer.from(
    'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==',
    'base64',
  );

  before(async () => {
    ({ server, port } = await listen((req, res) => {
      hits++;
      const url = new URL(req.url ?? '/', 'http://x');
      if (url.pathname === '/redirect') {
        res.writeHead(302, { location: url.searchParams.get('to') ?? '/' }).end();
      } else if (url.pathname === '/loop') {
        res.writeHead(302, { location: '/loop' }).end();
      } else if (url.pathname === '/big') {
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        // No content-length: the limit must hold while streaming, too.
        for (let i = 0; i < 10; i++) res.write(Buffer.alloc(1024, 1));
        res.end();
      } else if (url.pathname === '/declared') {
        res.writeHead(200, { 'content-length': 10 * 1024 });
        for (let i = 0; i < 10; i++) res.write(Buffer.alloc(1024, 2));
        res.end();
      } else if (url.pathname === '/slow') {
        setTimeout(() => res.end('late'), 5_000).unref();
      } else if (url.pathname === '/image.png') {
        res.writeHead(200, { 'content-type': 'text/plain' }).end(png);
      } else if (url.pathname === '/missing') {
        res.writeHead(404).end('no');
      } else {
        res.end('hello');
      }
    }));
  });
  after(() => {
    server.closeAllConnections();
    server.close();
  });

  describe('with ALLOW_PRIVATE_NETWORK_URLS=false', () => {
    const http = guarded(false);
    for (const url of [
      'http://127.0.0.1:PORT/',
      'http://[::1]/',
      'http://[::ffff:127.0.0.1]/',
      'http://[::ffff:7f00:1]/',
      'http://169.254.169.254/latest/meta-data/',
      'http://[fd00:ec2::254]/',
      'http://10.0.0.1/',
      'http://192.168.1.1/',
      'http://172.16.0.1/',
      'http://100.64.0.1/',
      'http://0.0.0.0/',
      'http://224.0.0.1/',
      'http://255.255.255.255/',
      'http://[fe80::1]/',
      'http://[fc00::1]/',
      'http://[2002:7f00:1::]/',
      'http://0x7f000001/',
      // IPv4 inside IPv6: compatible (::/96), mapped, translated, NAT64 (well-known and local-use),
      // 6to4 and Teredo, each around loopback, a private or the metadata address.
      'http://[::7f00:1]:PORT/',
      'http://[::127.0.0.1]:PORT/',
      'http://[::a00:1]/',
      'http://[::a9fe:a9fe]/',
      'http://[0:0:0:0:0:ffff:127.0.0.1]:PORT/',
      'http://[::ffff:a9fe:a9fe]/',
      'http://[::ffff:0:7f00:1]/',
      'http://[64:ff9b::7f00:1]/',
      'http://[64:ff9b::a9fe:a9fe]/',
      'http://[64:ff9b:1::a00:1]/',
      'http://[2002:a9fe:a9fe::]/',
      'http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/',
    ]) {
      it(`refuses ${url}`, async () => {
        const before = hits;
        await rejectsWith(http.request(url.replace('PORT', String(port))), 'BLOCKED_ADDRESS');
        assert.equal(hits, before, 'no request may reach the server');
      });
    }

    // The name is resolved only inside the connection's lookup, so the address refused is the
    // address that would have been connected to: no earlier answer can be swapped (DNS rebinding).
    it('refuses a name that resolves to loopback (localhost), at connect time', async () => {
      const before = hits;
      await rejectsWith(http.request(`http://localhost:${port}/`), 'BLOCKED_ADDRESS');
      assert.equal(hits, before);
    });

    it('re-checks every redirect: a public-looking site redirecting to loopback is refused', async () => {
      const trusting = guarded(false, { trustedOrigins: [`127.0.0.1:${port}`] });
      const other = await freePort();
      const before = hits;
      await rejectsWith(
        trusting.request(
          `http://127.0.0.1:${port}/redirect?to=${encodeURIComponent(`http://127.0.0.1:${other}/`)}`,
        ),
        'BLOCKED_ADDRESS',
      );
      assert.equal(hits, before + 1, 'only the first hop is sent');
    });

    it('re-checks a redirect to a name resolving to a private address', async () => {
      const lookup: LookupFunction = (_host, _opts, cb) => cb(null, [{ address: '10.1.2.3', family: 4 }]);
      const trusting = guarded(false, { trustedOrigins: [`127.0.0.1:${port}`], lookup });
      await rejectsWith(
        trusting.request(
          `http://127.0.0.1:${port}/redirect?to=${encodeURIComponent('http://internal.example/')}`,
        ),
        'BLOCKED_ADDRESS',
      );
    });

    it('refuses a name that does not resolve in the very words of one resolving to a private address', async () => {
      const refusal = async (lookup: LookupFunction) => {
        const err = await guarded(false, { lookup })
          .request('http://redis.internal/')
          .then(
            () => undefined,
            (e: unknown) => e,
          );
        assert.ok(err instanceof GuardedHttpError, String(err));
        return { kind: err.kind, message: err.message };
      };
      const notFound = Object.assign(new Error('getaddrinfo ENOTFOUND redis.internal'), {
        code: 'ENOTFOUND',
      });
      const failed = Object.assign(new Error('getaddrinfo EAI_AGAIN redis.internal'), { code: 'EAI_AGAIN' });
      const resolvesPrivate = await refusal((_h, _o, cb) => cb(null, [{ address: '10.1.2.3', family: 4 }]));
      assert.equal(resolvesPrivate.kind, 'BLOCKED_ADDRESS');
      assert.deepEqual(await refusal((_h, _o, cb) => cb(notFound, [])), resolvesPrivate);
      assert.deepEqual(await refusal((_h, _o, cb) => cb(failed, [])), resolvesPrivate);
      assert.deepEqual(await refusal((_h, _o, cb) => cb(null, [])), resolvesPrivate);
    });

    it('refuses schemes other than http and https', async () => {
      await rejectsWith(http.request('file:///etc/passwd'), 'BAD_URL');
      await rejectsWith(http.request('ftp://example.com/'), 'BAD_URL');
    });
  });

  describe('with ALLOW_PRIVATE_NETWORK_URLS=true', () => {
    const http = guarded(true);

    it('fetches a loopback URL, following redirects', async () => {
      const res = await http.request(`http://localhost:${port}/redirect?to=/hello`);
      assert.equal(res.status, 200);
      assert.equal(res.body.toString(), 'hello');
      assert.equal(res.url, `http://localhost:${port}/hello`);
    });

    it('refuses a redirect when maxRedirects is 0', async () => {
      await rejectsWith(
        http.request(`http://127.0.0.1:${port}/redirect?to=/`, { maxRedirects: 0 }),
        'REDIRECT_REFUSED',
      );
    });

    it('stops after maxRedirects', async () => {
      await rejectsWith(http.request(`http://127.0.0.1:${port}/loop`), 'TOO_MANY_REDIRECTS');
    });

    it('enforces the size limit while streaming', async () => {
      await rejectsWith(http.request(`http://127.0.0.1:${port}/big`, { maxBytes: 4_000 }), 'TOO_LARGE');
      const ok = await http.request(`http://127.0.0.1:${port}/big`, { maxBytes: 20_000 });
      assert.equal(ok.body.length, 10 * 1024);
    });

    it('refuses a declared length over the limit from the headers, and lives on', async () => {
      const uncaught: unknown[] = [];
      const record = (err: unknown) => uncaught.push(err);
      process.on('uncaughtException', record);
      try {
        await rejectsWith(
          http.request(`http://127.0.0.1:${port}/declared`, { maxBytes: 4_000 }),
          'TOO_LARGE',
        );
        // The dropped body reports its end on a later turn; nothing may surface uncaught then.
        await new Promise((resolve) => setImmediate(resolve));
        assert.deepEqual(uncaught, []);
      } finally {
        process.off('uncaughtException', record);
      }
    });

    it('open() answers at the headers, with the declared length, before reading the body', async () => {
      const res = await http.open(`http://127.0.0.1:${port}/declared`);
      assert.equal(res.declaredBytes, 10 * 1024);
      const chunks: Buffer[] = [];
      for await (const chunk of res.chunks()) chunks.push(chunk);
      assert.equal(Buffer.concat(chunks).length, 10 * 1024);

      // A shared allowance refuses the body once it is spent.
      let allowance = 4_000;
      const capped = await http.open(`http://127.0.0.1:${port}/big`);
      assert.equal(capped.declaredBytes, undefined);
      await rejectsWith(
        (async () => {
          for await (const chunk of capped.chunks((bytes) => (allowance -= bytes) >= 0)) void chunk;
        })(),
        'TOO_LARGE',
      );
      (await http.open(`http://127.0.0.1:${port}/declared`)).discard();
    });

    it('enforces the time limit', async () => {
      const started = Date.now();
      await rejectsWith(http.request(`http://127.0.0.1:${port}/slow`, { timeoutMs: 300 }), 'TIMEOUT');
      assert.ok(Date.now() - started < 2_000);
    });

    it('fetchMedia decides the type by the bytes, not the header', async () => {
      const media = await fetchMedia(http, `http://127.0.0.1:${port}/image.png`, {
        maxBytes: 1_000,
        accept: 'image',
      });
      assert.equal(media.mimeType, 'image/png');
      await assert.rejects(
        fetchMedia(http, `http://127.0.0.1:${port}/image.png`, { maxBytes: 1_000, accept: 'video' }),
        (err: unknown) => err instanceof MediaFetchError && err.kind === 'UNSUPPORTED_TYPE',
      );
      await assert.rejects(
        fetchMedia(http, `http://127.0.0.1:${port}/missing`, { maxBytes: 1_000, accept: 'image' }),
        (err: unknown) => err instanceof MediaFetchError && err.status === 404,
      );
    });
  });
});
