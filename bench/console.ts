/** The console row: what a browser downloads, compressed, to open a chat for the first time. */
import { get } from 'node:http';
import { gunzipSync } from 'node:zlib';
import type { Bench } from './context';
import { repeat } from './measure';
import { spreadOf, withSpread, type Row } from './report';

const TARGET_BYTES = 150 * 1024;

/** The body as it crosses the wire (fetch would decompress it), and its text. */
function compressedBytes(url: string): Promise<{ bytes: number; text: string }> {
  return new Promise((resolve, reject) => {
    get(url, { headers: { 'accept-encoding': 'gzip' } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        if (res.statusCode !== 200) return reject(new Error(`console ${url}: ${res.statusCode}`));
        const body = Buffer.concat(chunks);
        const gzipped = res.headers['content-encoding'] === 'gzip';
        resolve({ bytes: body.length, text: (gzipped ? gunzipSync(body) : body).toString() });
      });
    }).on('error', reject);
  });
}

/** One reading: the page, the assets it names and their compressed sizes. */
async function firstLoad(url: string) {
  const page = await compressedBytes(`${url}/chats/00000000-0000-4000-8000-000000000000`);
  const assets = [...page.text.matchAll(/(?:src|href)="(\/console\/assets\/[^"]+)"/g)].map((m) => m[1] ?? '');
  const sizes = await Promise.all(assets.map(async (a) => (await compressedBytes(`${url}${a}`)).bytes));
  return { assets, sizes, scriptsAndStyles: sizes.reduce((a, b) => a + b, 0), pageBytes: page.bytes };
}

export async function consoleRow(bench: Bench, rounds: number): Promise<Row> {
  console.log('bench: the console’s first load of a chat…');
  const { gateway } = await bench.inProcess();
  const readings = await repeat(rounds, () => firstLoad(gateway.url));
  const kib = spreadOf(readings.map((r) => r.scriptsAndStyles / 1024));
  const last = readings.at(-1);
  return {
    key: 'console',
    name: 'console: first load of a chat, JS + CSS',
    measure: `gzip bytes ×${rounds}`,
    service: `${withSpread(kib, 1, ' KiB')} (${last?.assets.length ?? 0} files)`,
    baseline: `page ${((last?.pageBytes ?? 0) / 1024).toFixed(1)} KiB`,
    ratio: '–',
    target: `<${TARGET_BYTES / 1024} KiB`,
    meets: readings.every((r) => r.assets.length > 0) && kib.median * 1024 < TARGET_BYTES,
    data: { readings, kib },
  };
}
