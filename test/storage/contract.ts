import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { publicBaseUrl, type Config } from '../../core/config/config';
import { createStorage } from '../../core/storage';
import { ObjectNotFoundError } from '../../core/storage/keys';
import { signedFileUrl } from '../../core/storage/signing';
import type { ObjectStorage } from '../../core/storage/storage';
import { startGateway, type TestGateway } from '../../testkit/gateway';
import { testStack } from '../../testkit/stack';

export interface StorageUnderTest {
  /** Config overrides selecting and configuring the driver. */
  env: Record<string, string>;
  teardown?: () => Promise<void>;
}

/** The same URL path and query, sent to the test gateway (its port is chosen after the config). */
function viaGateway(gateway: TestGateway, url: string): string {
  const u = new URL(url);
  return `${gateway.url}${u.pathname}${u.search}`;
}

/** One behaviour for every driver: each driver's test file runs this against a real backend. */
export function storageContract(driver: 'local' | 's3', setup: () => Promise<StorageUnderTest>): void {
  describe(`object storage contract (${driver})`, () => {
    let under: StorageUnderTest;
    let config: Config;
    let storage: ObjectStorage;
    let gateway: TestGateway;

    before(async () => {
      under = await setup();
      config = (await testStack()).config(under.env);
      storage = createStorage(config);
      gateway = await startGateway({ config });
    });
    after(async () => {
      await gateway?.close();
      await under?.teardown?.();
    });

    const newKey = () => `test/${randomUUID()}/a b+ü.png`;

    it('is the configured driver', () => {
      assert.equal(storage.driver, driver);
    });

    it('round-trips bytes and content type, and delete removes the object', async () => {
      const key = newKey();
      const bytes = Buffer.from('\u0089PNG fake but binary \u0000\u00ff', 'latin1');
      assert.deepEqual(await storage.put(key, bytes, { contentType: 'image/png' }), { size: bytes.length });
      const got = await storage.get(key);
      assert.equal(got.contentType, 'image/png');
      assert.equal(got.size, bytes.length);
      assert.deepEqual(await buffer(got.body), bytes);
      const info = await storage.stat(key);
      assert.deepEqual([info.contentType, info.size, info.etag], ['image/png', bytes.length, got.etag]);
      const part = await storage.get(key, { range: { start: 2, end: 5 } });
      assert.equal(part.size, bytes.length, 'size is the whole object, whatever the range');
      assert.deepEqual(await buffer(part.body), bytes.subarray(2, 6));
      await storage.delete(key);
      await assert.rejects(storage.get(key), ObjectNotFoundError);
      await assert.rejects(storage.stat(key), ObjectNotFoundError);
      await storage.delete(key); // deleting twice is fine
    });

    it('stores a stream of unknown and of known length', async () => {
      const chunks = Array.from({ length: 64 }, (_, i) => Buffer.alloc(16 * 1024, i));
      const whole = Buffer.concat(chunks);
      for (const size of [undefined, whole.length]) {
        const key = newKey();
        const put = await storage.put(key, Readable.from(chunks), { contentType: 'video/mp4', size });
        assert.equal(put.size, whole.length);
        const got = await storage.get(key);
        assert.equal(got.contentType, 'video/mp4');
        assert.deepEqual(await buffer(got.body), whole);
        await storage.delete(key);
      }
    });

    it('answers a missing object with ObjectNotFoundError', async () => {
      await assert.rejects(storage.get(newKey()), ObjectNotFoundError);
    });

    it('refuses keys that could escape or alias', async () => {
      for (const key of [
        '../x',
        'a/../../x',
        '/etc/passwd',
        'a//b',
        './a',
        'a/.',
        '',
        'a\\..\\b',
        'a\u0000b',
      ]) {
        await assert.rejects(
          storage.put(key, Buffer.from('x'), { contentType: 'image/png' }),
          /invalid storage key/,
        );
        await assert.rejects(storage.get(key), /invalid storage key/);
        assert.throws(() => storage.url(key), /invalid storage key/);
      }
    });

    it('serves byte ranges: 206 with Content-Range, 416 past the end, the whole file otherwise', async () => {
      const key = newKey();
      const bytes = randomBytes(1000);
      await storage.put(key, bytes, { contentType: 'video/mp4' });
      const url = viaGateway(gateway, storage.url(key));
      const get = (headers: Record<string, string>) => fetch(url, { headers });

      const whole = await get({});
      assert.equal(whole.status, 200);
      assert.equal(whole.headers.get('accept-ranges'), 'bytes');
      assert.equal(whole.headers.get('content-length'), '1000');
      await whole.arrayBuffer();

      for (const [range, start, end] of [
        ['bytes=100-199', 100, 199],
        ['bytes=900-', 900, 999],
        ['bytes=-50', 950, 999],
        ['bytes=990-5000', 990, 999],
      ] as const) {
        const res = await get({ range });
        assert.equal(res.status, 206, range);
        assert.equal(res.headers.get('content-range'), `bytes ${start}-${end}/1000`, range);
        assert.equal(res.headers.get('content-length'), String(end - start + 1), range);
        assert.equal(res.headers.get('content-type'), 'video/mp4');
        assert.deepEqual(Buffer.from(await res.arrayBuffer()), bytes.subarray(start, end + 1), range);
      }

      const past = await get({ range: 'bytes=1000-' });
      assert.equal(past.status, 416);
      assert.equal(past.headers.get('content-range'), 'bytes */1000');
      assert.equal(((await past.json()) as { code: string }).code, 'RANGE_NOT_SATISFIABLE');

      // A malformed range, or several ranges, get the whole file (RFC 9110 lets a server ignore Range).
      for (const range of ['bytes=abc', 'items=0-1', 'bytes=0-1,5-6']) {
        const res = await get({ range });
        assert.equal(res.status, 200, range);
        assert.deepEqual(Buffer.from(await res.arrayBuffer()), bytes, range);
      }
      await storage.delete(key);
    });

    it('answers conditional requests: ETag, If-None-Match (304) and If-Range', async () => {
      const key = newKey();
      const bytes = randomBytes(300);
      await storage.put(key, bytes, { contentType: 'image/png' });
      const url = viaGateway(gateway, storage.url(key));
      const first = await fetch(url);
      await first.arrayBuffer();
      const etag = first.headers.get('etag') ?? '';
      assert.match(etag, /^"[^"]+"$/);
      assert.ok(first.headers.get('last-modified'));

      for (const ifNoneMatch of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
        const res = await fetch(url, { headers: { 'if-none-match': ifNoneMatch } });
        assert.equal(res.status, 304, ifNoneMatch);
        assert.equal(res.headers.get('etag'), etag);
        assert.equal((await res.arrayBuffer()).byteLength, 0);
      }
      const changed = await fetch(url, { headers: { 'if-none-match': '"other"' } });
      assert.equal(changed.status, 200);
      assert.deepEqual(Buffer.from(await changed.arrayBuffer()), bytes);

      // Resuming a download: the range only while the file is the one the client began with.
      const same = await fetch(url, { headers: { range: 'bytes=100-', 'if-range': etag } });
      assert.equal(same.status, 206);
      assert.deepEqual(Buffer.from(await same.arrayBuffer()), bytes.subarray(100));
      const stale = await fetch(url, { headers: { range: 'bytes=100-', 'if-range': '"other"' } });
      assert.equal(stale.status, 200);
      assert.deepEqual(Buffer.from(await stale.arrayBuffer()), bytes);

      // Rewritten under the same key, the object has a new validator.
      await storage.put(key, randomBytes(300), { contentType: 'image/png' });
      const rewritten = await fetch(url, { headers: { 'if-none-match': etag } });
      assert.equal(rewritten.status, 200);
      assert.notEqual(rewritten.headers.get('etag'), etag);
      await rewritten.arrayBuffer();
      await storage.delete(key);
    });

    it('lets no shared cache keep a file, and the client no longer than its URL works', async () => {
      const key = newKey();
      await storage.put(key, Buffer.from('GIF89a and some bytes'), { contentType: 'image/gif' });
      // A URL signed long ago: it expires within the hour and a minute (its expiry is rounded up to
      // the hour from a minute ahead), not a year from now.
      const url = viaGateway(gateway, signedFileUrl(config, key, Date.now() - config.FILE_URL_TTL + 60_000));
      const exp = Number(new URL(url).searchParams.get('exp'));
      const asked = Date.now() / 1000;
      const first = await fetch(url);
      await first.arrayBuffer();
      const etag = first.headers.get('etag') ?? '';
      const answers = [
        first,
        await fetch(url, { headers: { 'if-none-match': etag } }),
        await fetch(url, { headers: { range: 'bytes=0-3' } }),
      ];
      assert.deepEqual(
        answers.map((r) => r.status),
        [200, 304, 206],
      );
      const answered = Date.now() / 1000;
      for (const res of answers) {
        if (!res.bodyUsed) await res.arrayBuffer();
        const header = res.headers.get('cache-control') ?? '';
        const maxAge = Number(/^private, max-age=(\d+), immutable$/.exec(header)?.[1]);
        assert.ok(Number.isInteger(maxAge), `${res.status}: ${header}`);
        // The whole seconds left when it was answered: between the ask and the last answer.
        assert.ok(
          maxAge <= exp - asked + 1 && maxAge >= exp - answered - 1,
          `${res.status}: max-age ${maxAge}, ${exp - answered} s left`,
        );
        assert.ok(maxAge <= 3660, `${res.status}: max-age ${maxAge}`);
      }
    });

    it('serves url() through the gateway, and refuses a missing or tampered signature with 404', async () => {
      const key = newKey();
      const bytes = Buffer.from('GIF89a and some bytes');
      await storage.put(key, bytes, { contentType: 'image/gif' });
      const url = storage.url(key);
      assert.ok(url.startsWith(`${publicBaseUrl(config)}/files/`), url);
      const sig = new URL(url).searchParams.get('sig') ?? '';
      assert.match(sig, /^[0-9a-f]{64}$/);

      const res = await fetch(viaGateway(gateway, url));
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('content-type'), 'image/gif');
      assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
      assert.match(res.headers.get('content-disposition') ?? '', /^inline/);
      assert.deepEqual(Buffer.from(await res.arrayBuffer()), bytes);

      const unsigned = new URL(viaGateway(gateway, url));
      unsigned.search = '';
      const tampered = new URL(viaGateway(gateway, url));
      tampered.searchParams.set('sig', `${sig.slice(0, -1)}${sig.endsWith('0') ? '1' : '0'}`);
      const otherKey = new URL(viaGateway(gateway, storage.url(newKey())));
      otherKey.searchParams.set('sig', sig);
      // The expiry is signed too: moving it later breaks the signature.
      const extended = new URL(viaGateway(gateway, url));
      extended.searchParams.set('exp', String(Number(extended.searchParams.get('exp')) + 3600));
      const noExpiry = new URL(viaGateway(gateway, url));
      noExpiry.searchParams.delete('exp');
      // A URL signed longer than FILE_URL_TTL ago has expired.
      const expired = viaGateway(
        gateway,
        signedFileUrl(config, key, Date.now() - config.FILE_URL_TTL - 2 * 3_600_000),
      );
      for (const bad of [unsigned, tampered, otherKey, extended, noExpiry, expired]) {
        const r = await fetch(bad);
        assert.equal(r.status, 404, bad.toString());
        assert.deepEqual(await r.json(), { error: 'No such file.', code: 'NOT_FOUND' });
      }

      // A valid signature for an object that is gone answers exactly the same.
      await storage.delete(key);
      const gone = await fetch(viaGateway(gateway, url));
      assert.equal(gone.status, 404);
      assert.deepEqual(await gone.json(), { error: 'No such file.', code: 'NOT_FOUND' });
    });
  });
}
