import { spawnSync } from 'node:child_process';
import { accessSync, constants, readdirSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { migrate } from '../../core/db/migrator';

/**
 * `npm run db:migrate`: `prisma migrate deploy` where a schema engine exists, else the built-in
 * migrator, which records migrations exactly as Prisma does so either can take over.
 */
function schemaEngine(): string | undefined {
  const fromEnv = process.env.PRISMA_SCHEMA_ENGINE_BINARY;
  const candidates = fromEnv
    ? [fromEnv]
    : (() => {
        const dir = path.resolve(__dirname, '../../node_modules/@prisma/engines');
        try {
          return readdirSync(dir)
            .filter((f) => f.startsWith('schema-engine'))
            .map((f) => path.join(dir, f));
        } catch {
          return [];
        }
      })();
  return candidates.find((file) => {
    try {
      accessSync(file, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

async function main(): Promise<void> {
  const { DATABASE_URL } = z
    .object({
      DATABASE_URL: z.string().regex(/^postgres(ql)?:\/\//, 'DATABASE_URL: expected a postgresql:// URL'),
    })
    .parse(process.env);
  const engine = schemaEngine();
  if (engine) {
    const result = spawnSync('prisma', ['migrate', 'deploy'], {
      stdio: 'inherit',
      env: { ...process.env, PRISMA_SCHEMA_ENGINE_BINARY: engine },
    });
    process.exit(result.status ?? 1);
  }
  const result = await migrate(DATABASE_URL);
  process.stdout.write(
    `migrations: ${result.applied.length} applied (${result.applied.join(', ') || 'none'}), ${result.alreadyApplied.length} already in place\n`,
  );
}

main().catch((err: Error) => {
  process.stderr.write(`${err.message}\n`);
  process.exit(1);
});
