import assert from 'node:assert/strict';
import { loadConfig } from '../../core/config/config';
import {
  fileUrlExpiry,
  refreshFileUrls,
  signedFileUrl,
  verifyKeySignature,
} from '../../core/storage/signing';

const config = loadConfig({
  DATABASE_URL: 'postgresql://unused/unused',
  APP_SECRET: 'x'.repeat(32),
  PUBLIC_BASE_URL: 'https://chat.example.test',
  FILE_URL_TTL: '2h',
});
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

  it('re-signs this gateway’s stale file URLs anywhere in a value, and nothing else', () => {
    const long = Date.now() - 10 * HOUR;
    const stale = signedFileUrl(config, 'u/pic one.png', long);
    const foreign = `https://evil.example/files/u/other.png?exp=1&sig=${'0'.repeat(64)}`;
    const value = {
      contentBlocks: [
        { type: 'image', url: stale },
        { type: 'image', url: foreign },
        { type: 'tool_result', result: { output: { url: stale, provider: 'ffmpeg' } } },
      ],
      text: 'see https://chat.example.test/files/u/pic%20one.png',
      createdAt: '2026-11-23T12:00:00.000Z',
    };
    const fresh = refreshFileUrls(config, value);
    const [first, second, third] = fresh.contentBlocks as {
      url?: string;
      result?: { output: { url: string } };
    }[];
    const { sig, exp } = parts(first?.url ?? '');
    assert.ok(verifyKeySignature(config, 'u/pic one.png', sig, exp));
    assert.equal(second?.url, foreign);
    assert.equal(third?.result?.output.url, first?.url);
    assert.equal(fresh.text, value.text, 'an unsigned mention is left as written');
    assert.equal(fresh.createdAt, value.createdAt);
  });
});
