// Builds the package: src/ to JavaScript with its types, once as ES modules (dist/esm) and once as
// CommonJS (dist/cjs), each folder marked with its module type so Node reads its .js files right.
// Runs on `npm pack` (prepack); TypeScript is found in this package's node_modules or above it.
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const here = path.dirname(new URL(import.meta.url).pathname);
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const builds = [
  { dir: 'esm', type: 'module', options: ['--module', 'es2022', '--moduleResolution', 'bundler'] },
  { dir: 'cjs', type: 'commonjs', options: ['--module', 'commonjs', '--moduleResolution', 'node10'] },
];

rmSync(path.join(here, 'dist'), { recursive: true, force: true });
for (const { dir, type, options } of builds) {
  const outDir = path.join(here, 'dist', dir);
  execFileSync(
    process.execPath,
    [tsc, '-p', path.join(here, 'tsconfig.json'), '--outDir', outDir, ...options],
    {
      stdio: 'inherit',
    },
  );
  mkdirSync(outDir, { recursive: true });
  writeFileSync(path.join(outDir, 'package.json'), `${JSON.stringify({ type })}\n`);
}
