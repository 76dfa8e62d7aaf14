import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Config } from '../../core/config/config';
import { signedFileUrl } from '../../core/storage/signing';
import { createTestUser, type TestUser } from '../../testkit/users';
import { startGateway, type TestGateway } from '../../testkit/gateway';
import { testStack } from '../../testkit/stack';
import { startWorker, type TestWorker } from '../../testkit/worker';
import { quadrantImage, startMediaServer } from '../support/fake-providers';
import { uploadAttachment } from '../support/uploads';

const DAY = 24 * 3_600_000;

/**
 * Issue 45, finding 7 (and the input half of finding 1): every URL the service will not fetch
 * gets one answer, the same status, code and message, on every tool route and in a turn's
 * image_urls: a private, loopback, link-local or metadata address, a name that does not resolve,
 * and a `/files/` URL of this service that is not the caller's own, signed and unexpired. Were any
 * two told apart, a client could map which internal names exist.
 */
describe('URLs the service will not fetch', function () {
  this.timeout(120_000);
  let config: Config;
  let gateway: TestGateway;
  let worker: TestWorker;
  let storageDir: string;
  let media: Awaited<ReturnType<typeof startMediaServer>>;
  let canaryUrl: string;
  let owner: TestUser;
  let caller: TestUser;
  let ownerKey: string;
  let callerFile: { key: string; url: string };

  before(async () => {
    storageDir = await mkdtemp(path.join(tmpdir(), 'refused-urls-'));
    config = (await testStack()).config({
      STORAGE_LOCAL_DIR: storageDir,
      // A public address, as in a deployment: a URL of this service is not refused as loopback.
      PUBLIC_BASE_URL: 'http://93.184.215.14',
      ALLOW_PRIVATE_NETWORK_URLS: 'false',
      IMAGE_PROVIDER: 'local-preview',
    });
    worker = await startWorker({ config });
    gateway = await startGateway({ config });
    // A loopback server a refused URL would reach, were it fetched.
    media = await startMediaServer();
    canaryUrl = media.add('x.png', await quadrantImage(4, 4), 'image/png');
    owner = await createTestUser();
    caller = await createTestUser();
    ownerKey = (await upload(owner)).key;
    callerFile = await upload(caller);
  });
  after(async () => {
    await gateway?.close();
    await worker?.stop();
    await media?.close();
    await rm(storageDir, { recursive: true, force: true });
  });

  const upload = async (who: TestUser) => uploadAttachment(gateway, who, await quadrantImage(40, 20));

  const post = async (route: string, body: unknown) => {
    const res = await fetch(`${gateway.url}${route}`, {
      method: 'POST',
      headers: { ...caller.bearer, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  /** Each URL the service will not fetch, by what makes it so. */
  const refused = (): Record<string, string> => {
    const retired = { ...config, APP_SECRET: 'r'.repeat(40) };
    return {
      'a private address': 'http://10.0.0.1/x.png',
      'a loopback address': canaryUrl,
      'a name of loopback': canaryUrl.replace('127.0.0.1', 'localhost'),
      'the metadata address': 'http://169.254.169.254/latest/meta-data/',
      'a link-local address': 'http://[fe80::1]/x.png',
      'a name that does not resolve': 'http://redis.internal.invalid/x.png',
      "another user's file": signedFileUrl(config, ownerKey),
      'a forged signature': `${config.PUBLIC_BASE_URL}/files/${callerFile.key}?exp=9999999999&sig=${'0'.repeat(64)}`,
      'no signature': `${config.PUBLIC_BASE_URL}/files/${callerFile.key}`,
      'an expired own file': signedFileUrl(config, callerFile.key, Date.now() - config.FILE_URL_TTL - DAY),
      'an own file signed under a retired secret': signedFileUrl(retired, callerFile.key),
    };
  };

  const tools: [string, (url: string) => unknown][] = [
    ['crop_image', (url) => ({ image_url: url, x: 0, y: 0, width: 1, height: 1 })],
    ['ai_image_2', (url) => ({ prompt: 'a cat', image_url: url })],
    ['merge_videos', (url) => ({ video_urls: [url, url] })],
  ];

  for (const [tool, input] of tools) {
    it(`answers every URL it will not fetch alike on ${tool}, fetching nothing and charging nothing`, async () => {
      const hits = media.hits(canaryUrl);
      const answers = [];
      for (const [why, url] of Object.entries(refused())) {
        const res = await post(`/api/v1/tools/${tool}`, input(url));
        answers.push({ why, status: res.status, body: res.body });
      }
      const [first] = answers;
      assert.equal(first?.status, 422, JSON.stringify(first));
      assert.equal(first?.body.code, 'MEDIA_UNAVAILABLE');
      for (const answer of answers)
        assert.deepEqual(
          { status: answer.status, body: answer.body },
          { status: first?.status, body: first?.body },
          `${answer.why} is told apart from ${first?.why}`,
        );
      assert.equal(media.hits(canaryUrl), hits, 'no request reached the loopback server');
      const { rows } = await gateway.deps.db.pool.query(
        `SELECT 1 FROM "CreditLedgerEntry" l JOIN "ToolCall" c ON c.id = l."toolCallId" WHERE c."userId" = $1`,
        [caller.userId],
      );
      assert.equal(rows.length, 0, 'no charge');
    });
  }

  it("answers every URL it will not fetch alike in a turn's image_urls, writing nothing", async () => {
    const answers = [];
    for (const [why, url] of Object.entries(refused())) {
      const res = await post('/api/v1/completions', { text: 'look', image_urls: [url] });
      answers.push({ why, status: res.status, body: res.body });
    }
    // The caller's own valid URL too: a turn names an upload by attachmentIds, never by its URL.
    const own = await post('/api/v1/completions', { text: 'look', image_urls: [callerFile.url] });
    answers.push({ why: 'an own file', status: own.status, body: own.body });
    const [first] = answers;
    assert.equal(first?.status, 400);
    assert.deepEqual(first?.body.details, [
      { path: 'body.image_urls.0', message: 'must point at a public address' },
    ]);
    for (const answer of answers)
      assert.deepEqual(
        { status: answer.status, body: answer.body },
        { status: first?.status, body: first?.body },
        `${answer.why} is told apart from ${first?.why}`,
      );
    const { rows } = await gateway.deps.db.pool.query(`SELECT 1 FROM "Chat" WHERE "userId" = $1`, [
      caller.userId,
    ]);
    assert.equal(rows.length, 0);
  });

  it("takes the caller's own signed file URL as tool input, read from storage rather than fetched", async () => {
    const crop = await post('/api/v1/tools/crop_image', {
      image_url: callerFile.url,
      x: 0,
      y: 0,
      width: 20,
      height: 20,
    });
    assert.equal(crop.status, 200, JSON.stringify(crop.body));
    // The crop's own output, named by the URL it answered, is the caller's too.
    const output = (crop.body as { output: { url: string } }).output.url;
    const edit = await post('/api/v1/tools/ai_image_2', { prompt: 'make it blue', image_url: output });
    assert.equal(edit.status, 200, JSON.stringify(edit.body));
  });
});
