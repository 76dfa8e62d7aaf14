import assert from 'node:assert/strict';
import { loadConfig } from '../../core/config/config';
import type { ContentBlock } from '../../core/schemas/runs';
import {
  fileUrlExpiry,
  refreshContentBlocks,
  signedFileUrl,
  verifyKeySignature,
} from '../../core/storage/signing';

const env = {
  DATABASE_URL: 'postgresql://unused/unused',
  APP_SECRET: 'x'.repeat(32),
  PUBLIC_BASE_URL: 'https://chat.example.test',
  FILE_URL_TTL: '2h',
};
const config = loadConfig(env);
const HOUR = 3_600_000;

function parts(url: string) {
  const u = new URL(url);
  return { sig: u.searchParams.get('sig') ?? '', exp: u.searchParams.get('exp') ?? '' };
}

describe('signed file URLs', () => {
  it('expire FILE_URL_TTL after signing (rounded up to the hour), and are one URL within that hour', () => {
    const now = Date.UTC(2026, 10, 23, 12, 20);
    const { exp } = parts(signedFileUrl(config, 'u/a.png', now));
    assert.equal(Number(exp) * 1000, Date.UTC(2026, 10, 23, 15, 0));
    assert.equal(signedFileUrl(config, 'u/a.png', now), signedFileUrl(config, 'u/a.png', now + 30 * 60_000));
    assert.equal(fileUrlExpiry(config, now), Number(exp));
    const { sig } = parts(signedFileUrl(config, 'u/a.png', now));
    assert.ok(verifyKeySignature(config, 'u/a.png', sig, exp, now + 2 * HOUR));
    assert.ok(!verifyKeySignature(config, 'u/a.png', sig, exp, now + 3 * HOUR));
  });

  it('re-signs the URLs the service stored of the reader’s own files, stale or under a retired secret, and nothing else', () => {
    const reader = 'u-1';
    const long = Date.now() - 10 * HOUR;
    const retired = loadConfig({ ...env, APP_SECRET: 'y'.repeat(32) });
    const upload = `attachments/${reader}/pic one`;
    const output = `tools/${reader}/call-1/out.png`;
    const stale = signedFileUrl(config, upload, long);
    const otherUser = signedFileUrl(config, 'attachments/u-2/theirs', long);
    const foreign = `https://evil.example/files/${upload}?exp=1&sig=${'0'.repeat(64)}`;
    const result = (url: string) => ({
      toolName: 'crop_image',
      output: { url, provider: 'sharp' },
      assets: [{ url, mimeType: 'image/png', filename: 'out.png' }],
      creditCost: '1',
      durationMs: 1,
      providerRunId: 'x',
    });
    const blocks: ContentBlock[] = [
      { type: 'text', text: stale },
      { type: 'image', attachmentId: 'a-1', url: stale },
      { type: 'image', attachmentId: 'a-2', url: otherUser },
      { type: 'image', attachmentId: 'a-3', url: foreign },
      { type: 'image', attachmentId: null, url: stale },
      { type: 'tool_use', toolCallId: 'call-1', toolName: 'crop_image', input: { image_url: stale } },
      {
        type: 'tool_result',
        toolCallId: 'call-1',
        toolName: 'crop_image',
        result: result(signedFileUrl(retired, output, long)),
      },
    ];
    const fresh = refreshContentBlocks(config, blocks, reader);
    const urlOf = (i: number) => (fresh[i] as { url: string }).url;
    const { sig, exp } = parts(urlOf(1));
    assert.ok(verifyKeySignature(config, upload, sig, exp), 'the reader’s stale upload is signed afresh');
    const refreshed = fresh[6] as { result: ReturnType<typeof result> };
    const signed = parts(refreshed.result.output.url);
    assert.ok(verifyKeySignature(config, output, signed.sig, signed.exp), 'a retired secret’s output too');
    assert.equal(refreshed.result.assets[0]?.url, refreshed.result.output.url);
    // Written by a user or a model, or naming another user's file: as it was.
    assert.deepEqual(fresh[0], blocks[0]);
    assert.deepEqual(fresh[2], blocks[2]);
    assert.deepEqual(fresh[3], blocks[3]);
    assert.deepEqual(fresh[4], blocks[4]);
    assert.deepEqual(fresh[5], blocks[5]);
    // Copy on write: nothing to sign, nothing copied.
    const plain: ContentBlock[] = [{ type: 'text', text: 'hello' }, blocks[2] as ContentBlock];
    assert.equal(refreshContentBlocks(config, plain, reader), plain);
  });
});
