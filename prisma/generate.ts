import { spawnSync } from 'node:child_process';

// `prisma generate` needs no schema engine, yet downloads one unless this variable names an
// existing file; the Node binary always exists, and generation never executes it.
const result = spawnSync('prisma', ['generate'], {
  stdio: 'inherit',
  env: { ...process.env, PRISMA_SCHEMA_ENGINE_BINARY: process.execPath, PRISMA_HIDE_UPDATE_MESSAGE: '1' },
  shell: false,
});
process.exit(result.status ?? 1);
