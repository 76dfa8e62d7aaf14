import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { createTestUser, type TestUser } from '../../testkit/users';
import { noisePng, startMediaServer } from '../support/fake-providers';
import { latestToolCall } from '../support/tool-calls';
import { startGateway, type TestGateway } from '../../testkit/gateway';
import { testStack } from '../../testkit/stack';
import { startWorker, type TestWorker } from '../../testkit/worker';

/**
 * An input no retry can mend (undecodable, too many pixels) is refused at the first attempt, with
 * the status that names its cause and the limit, the user's URL fetched once and nothing charged.
 */
/** Input images are cut past this many streamed bytes here (the default is 20 MB). */
const IMAGE_BYTES_CAP = 5_000_000;

describe('tool inputs refused at the first attempt', function () {
  this.timeout(120_000);
  let storageDir: string;
  let gateway: TestGateway;
  let worker: TestWorker;
  let media: Awaited<ReturnType<typeof startMediaServer>>;
  let user: TestUser;
  let truncatedUrl: string;
  let hugeUrl: string;
  let heavyUrl: string;

  before(async () => {
    const stack = await testStack();
    storageDir = await mkdtemp(path.join(tmpdir(), 'input-failures-test-'));
    media = await startMediaServer();
    const config = stack.config({
      STORAGE_LOCAL_DIR: storageDir,
      IMAGE_PROVIDER: 'local-preview',
      IMAGE_FETCH_MAX_BYTES: String(IMAGE_BYTES_CAP),
    });
    worker = await startWorker({ config });
    gateway = await startGateway({ config });
    user = await createTestUser();
    // The first 1,500 bytes of a valid PNG: the header decodes, the pixels do not.
    truncatedUrl = media.add('truncated.png', (await noisePng(100, 100)).subarray(0, 1500), 'image/png');
    // A valid PNG of 108 megapixels, past the 100 the tools decode.
    const huge = await sharp({ create: { width: 12_000, height: 9_000, channels: 3, background: '#123' } })
      .png({ compressionLevel: 1 })
      .toBuffer();
    hugeUrl = media.add('huge.png', huge, 'image/png');
    // Random pixels do not compress: about 6.8 MB, sent without a length, so only counting the
    // streamed bytes can stop it.
    heavyUrl = media.add('heavy.png', await noisePng(1500, 1500), 'image/png', { chunked: true });
  });
  after(async () => {
    await gateway?.close();
    await worker?.stop();
    await media?.close();
    await rm(storageDir, { recursive: true, force: true });
  });

  const post = async (tool: string, body: unknown) => {
    const res = await fetch(`${gateway.url}/api/v1/tools/${tool}`, {
      method: 'POST',
      headers: { ...user.bearer, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as { code?: string; error?: string } };
  };

  /** The call ended FAILED with no charge, and the URL was fetched once more than before. */
  const assertRefusedOnce = async (url: string, hitsBefore: number) => {
    const call = await latestToolCall(gateway.deps.db.pool, user.userId);
    assert.equal(call?.status, 'FAILED');
    assert.equal(call?.charges, '0', 'no charge');
    assert.equal(media.hits(url), hitsBefore + 1, 'the URL is fetched once');
  };

  const cases = [
    {
      name: 'crop_image of an image over IMAGE_FETCH_MAX_BYTES',
      tool: 'crop_image',
      body: () => ({ image_url: heavyUrl, x: 0, y: 0, width: 10, height: 10 }),
      url: () => heavyUrl,
      status: 413,
      code: 'PAYLOAD_TOO_LARGE',
      message: /larger than .*\(IMAGE_FETCH_MAX_BYTES\)/,
    },
    {
      name: 'an ai_image_2 edit of an image over IMAGE_FETCH_MAX_BYTES',
      tool: 'ai_image_2',
      body: () => ({ prompt: 'make it blue', image_url: heavyUrl }),
      url: () => heavyUrl,
      status: 413,
      code: 'PAYLOAD_TOO_LARGE',
      message: /larger than .*\(IMAGE_FETCH_MAX_BYTES\)/,
    },
    {
      name: 'crop_image of an undecodable PNG',
      tool: 'crop_image',
      body: () => ({ image_url: truncatedUrl, x: 0, y: 0, width: 10, height: 10 }),
      url: () => truncatedUrl,
      status: 415,
      code: 'UNSUPPORTED_MEDIA_TYPE',
      message: /cannot be decoded/,
    },
    {
      name: 'crop_image of a 108-megapixel PNG',
      tool: 'crop_image',
      body: () => ({ image_url: hugeUrl, x: 0, y: 0, width: 10, height: 10 }),
      url: () => hugeUrl,
      status: 413,
      code: 'PAYLOAD_TOO_LARGE',
      message: /12000x9000.*at most 100 megapixels/,
    },
    {
      name: 'an ai_image_2 edit of an undecodable PNG',
      tool: 'ai_image_2',
      body: () => ({ prompt: 'make it blue', image_url: truncatedUrl }),
      url: () => truncatedUrl,
      status: 415,
      code: 'UNSUPPORTED_MEDIA_TYPE',
      message: /cannot be decoded/,
    },
    {
      name: 'an ai_image_2 edit of a 108-megapixel PNG',
      tool: 'ai_image_2',
      body: () => ({ prompt: 'make it blue', image_url: hugeUrl }),
      url: () => hugeUrl,
      status: 413,
      code: 'PAYLOAD_TOO_LARGE',
      message: /12000x9000.*at most 100 megapixels/,
    },
  ];
  for (const c of cases) {
    it(`answers ${c.status} ${c.code} at once for ${c.name}`, async () => {
      const hits = media.hits(c.url());
      const res = await post(c.tool, c.body());
      assert.equal(res.status, c.status, JSON.stringify(res.body));
      assert.equal(res.body.code, c.code);
      assert.match(res.body.error ?? '', c.message);
      await assertRefusedOnce(c.url(), hits);
    });
  }

  it('still retries a fetch that failed transiently (a 503 from the host)', async () => {
    const url = media.add('flaky.png', await noisePng(20, 20), 'image/png', { failFirst: 1 });
    const res = await post('crop_image', { image_url: url, x: 0, y: 0, width: 10, height: 10 });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(media.hits(url), 2);
  });
});
