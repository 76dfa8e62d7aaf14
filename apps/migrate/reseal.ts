import { loadConfigOrExit } from '../../core/config/config';
import { createDatabase } from '../../core/db/client';
import { resealWebhookSecrets } from '../../core/webhooks/reseal';

/** `npm run secrets:reseal`: the last step of an APP_SECRET rotation (docs/security.md). */
async function main(): Promise<void> {
  const config = loadConfigOrExit();
  const db = createDatabase({ url: config.DATABASE_URL, poolSize: 2 });
  try {
    const { resealed, current, unreadable } = await resealWebhookSecrets(db.pool, config);
    process.stdout.write(`webhook secrets resealed under APP_SECRET: ${resealed} (already: ${current})\n`);
    if (unreadable.length) {
      // Their deliveries fail until the endpoint is registered again; keep APP_SECRET_PREVIOUS if unsure.
      process.stderr.write(
        `${unreadable.length} endpoint secrets open with none of the configured secrets: ${unreadable.join(', ')}\n`,
      );
      process.exitCode = 2;
    }
  } finally {
    await db.close();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
