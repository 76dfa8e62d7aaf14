import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { Client } from 'pg';
import { MIGRATIONS_DIR, migrate, readMigrations } from '../../core/db/migrator';
import { testStack } from '../../testkit/stack';

async function query<T extends object>(url: string, sql: string): Promise<T[]> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(sql)).rows;
  } finally {
    await client.end();
  }
}

describe('migrator', () => {
  it('applies every migration to a fresh database and records it as Prisma does', async () => {
    const url = await (await testStack()).createDatabase('migrate_fresh');
    const migrations = await readMigrations();
    assert.ok(migrations.length > 0);

    const result = await migrate(url);
    assert.deepEqual(
      result.applied,
      migrations.map((m) => m.name),
    );

    const rows = await query<{
      migration_name: string;
      checksum: string;
      finished_at: Date | null;
      applied_steps_count: number;
    }>(
      url,
      'SELECT migration_name, checksum, finished_at, applied_steps_count FROM "_prisma_migrations" ORDER BY migration_name',
    );
    assert.equal(rows.length, migrations.length);
    for (const [i, row] of rows.entries()) {
      const file = await readFile(path.join(MIGRATIONS_DIR, row.migration_name, 'migration.sql'));
      assert.equal(row.migration_name, migrations[i]?.name);
      assert.equal(row.checksum, createHash('sha256').update(file).digest('hex'));
      assert.ok(row.finished_at instanceof Date);
      assert.equal(row.applied_steps_count, 1);
    }
    const columns = await query<{ column_name: string; data_type: string }>(
      url,
      `SELECT column_name, data_type FROM information_schema.columns WHERE table_name = '_prisma_migrations' ORDER BY ordinal_position`,
    );
    assert.deepEqual(
      columns.map((c) => c.column_name),
      [
        'id',
        'checksum',
        'finished_at',
        'migration_name',
        'logs',
        'rolled_back_at',
        'started_at',
        'applied_steps_count',
      ],
    );
  });

  it('is a no-op when run again', async () => {
    const url = await (await testStack()).createDatabase('migrate_rerun');
    await migrate(url);
    const again = await migrate(url);
    assert.deepEqual(again.applied, []);
    assert.equal(again.alreadyApplied.length, (await readMigrations()).length);
    const [count] = await query<{ n: string }>(url, 'SELECT count(*) AS n FROM "_prisma_migrations"');
    assert.equal(Number(count?.n), (await readMigrations()).length);
  });

  it('applies each migration once when two migrators start together', async () => {
    const url = await (await testStack()).createDatabase('migrate_race');
    const [a, b] = await Promise.all([migrate(url), migrate(url)]);
    const total = (await readMigrations()).length;
    assert.equal(a.applied.length + b.applied.length, total);
    const [count] = await query<{ n: string }>(url, 'SELECT count(*) AS n FROM "_prisma_migrations"');
    assert.equal(Number(count?.n), total);
  });

  it('refuses to go on when an applied migration was edited', async () => {
    const url = await (await testStack()).createDatabase('migrate_edited');
    await migrate(url);
    const client = new Client({ connectionString: url });
    await client.connect();
    await client.query(`UPDATE "_prisma_migrations" SET checksum = repeat('0', 64)`);
    await client.end();
    await assert.rejects(migrate(url), /was changed after it was applied/);
  });
});
