/**
 * `npm run bench:generate -- --scale=0.02`: fills the database of DATABASE_URL (empty; migrated
 * first) with a year of generated data (bench/generate.ts), prints what it wrote and how long each
 * part took, and with `--out=<file>` writes the same as JSON.
 */
import { writeFile } from 'node:fs/promises';
import { generateDatabase } from './generate';

function flag(name: string): string | undefined {
  return process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
}

async function main(): Promise<void> {
  const url = process.env.DATABASE_URL;
  if (!url) throw new Error('bench:generate: set DATABASE_URL to an empty database to fill');
  const scale = Number(flag('scale') ?? process.env.BENCH_BIGDB_SCALE ?? '1');
  console.log(`bench:generate: scale ${scale}`);
  const generated = await generateDatabase(url, scale, (line) => console.log(`  ${line}`));
  const mib = (b: number) => (b / 1024 / 1024).toFixed(0);
  for (const t of generated.tables)
    console.log(
      `  ${t.table}: ${t.rows.toLocaleString('en')} rows, ${mib(t.bytes)} MiB (indexes ${mib(t.indexBytes)})`,
    );
  console.log(
    `bench:generate: ${mib(generated.databaseBytes)} MiB in ${generated.seconds.toFixed(0)} s (scale ${scale})`,
  );
  const out = flag('out');
  if (out) await writeFile(out, JSON.stringify(generated, null, 2) + '\n');
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
