/** The console row: what a browser downloads, compressed, to open a chat for the first time. */
import { get } from 'node:http';
import { gunzipSync } from 'node:zlib';
import type { Bench } from './context';
import type { Row } from './report';

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

export async function consoleRow(bench: Bench): Promise<Row> {
  console.log('bench: the console’s first load of a chat…');
  const { gateway } = await bench.inProcess();
  const page = await compressedBytes(`${gateway.url}/chats/00000000-0000-4000-8000-000000000000`);
  const assets = [...page.text.matchAll(/(?:src|href)="(\/console\/assets\/[^"]+)"/g)].map((m) => m[1] ?? '');
  const sizes = await Promise.all(
    assets.map(async (a) => (await compressedBytes(`${gateway.url}${a}`)).bytes),
  );
  const scriptsAndStyles = sizes.reduce((a, b) => a + b, 0);
  return {
    key: 'console',
    name: 'console: first load of a chat, JS + CSS',
    measure: 'gzip bytes',
    service: `${(scriptsAndStyles / 1024).toFixed(1)} KiB (${assets.length} files)`,
    baseline: `page ${(page.bytes / 1024).toFixed(1)} KiB`,
    ratio: '–',
    target: `<${TARGET_BYTES / 1024} KiB`,
    meets: assets.length > 0 && scriptsAndStyles < TARGET_BYTES,
    data: { assets, sizes, scriptsAndStyles, pageBytes: page.bytes },
  };
}
