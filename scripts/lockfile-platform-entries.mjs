// Some registries (this project's offline mirror among them) do not serve every platform build of
// @swc/core and unrs-resolver. npm then writes no lockfile entry for those optional packages, and
// `npm ci` refuses the lockfile as out of sync (npm/cli#4828, #8320). This adds the missing entries,
// each marked optional with its os/cpu, so `npm ci` skips them on every other platform.
// Run after `npm install` changes package-lock.json: `node scripts/lockfile-platform-entries.mjs`.
import { readFileSync, writeFileSync } from 'node:fs';

const file = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(file, 'utf8'));
const packages = lock.packages;
const PLATFORM =
  /-(android|darwin|freebsd|linux|openharmony|win32)-(arm64|arm|x64|ia32|ppc64|s390x|loong64|riscv64)(?:-(gnu|musl|gnueabihf|musleabihf|eabi|msvc))?$/;

let added = 0;
for (const entry of Object.values(packages)) {
  for (const [name, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const target = `node_modules/${name}`;
    const match = PLATFORM.exec(name);
    if (packages[target] || !match) continue;
    const [, os, cpu, abi] = match;
    packages[target] = {
      version,
      cpu: [cpu],
      ...(abi === 'musl' || abi === 'musleabihf'
        ? { libc: ['musl'] }
        : abi === 'gnu' || abi === 'gnueabihf'
          ? { libc: ['glibc'] }
          : {}),
      optional: true,
      os: [os],
    };
    added += 1;
  }
}
writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`added ${added} platform entries`);
