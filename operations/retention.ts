import type { PoolClient } from 'pg';
import { purgeDeletedChatStep } from '../core/chats/store';
import { withTransaction } from '../core/db/client';
import { deleteExpiredSessions } from '../core/identity/store';
import { deleteExpiredKeys } from '../core/idempotency/store';
import { deleteEndedGrants, deleteExpiredCodes, deleteIdleClients } from '../core/oauth/store';
import { pruneRunEvents } from '../core/runs/store';
import { releaseStorage } from '../core/storage/store';
import { deleteUnattachedUploads } from '../core/uploads/store';
import { clearOldAttemptContent, deleteOldDeliveries } from '../core/webhooks/store';
import type { OperationDeps } from './deps';

/**
 * Statements one rule runs in one pass at most: a backlog (a first pass on a database a year old)
 * is worked off over the passes that follow, so no pass holds the reconciler for long.
 */
export const MAX_BATCHES_PER_PASS = 20;

/** What one retention pass deleted (or cleared), per rule. */
export interface RetentionReport {
  /** Live-stream events of runs that ended longer than RUN_EVENTS_RETENTION ago. */
  runEvents: number;
  /** Idempotency keys past their 24 hours. */
  idempotencyKeys: number;
  webhookDeliveries: number;
  /** Attempts whose signed content and headers were cleared. */
  webhookAttemptContents: number;
  expiredSessions: number;
  oauthGrants: number;
  /** OAuth codes past their lifetime. */
  oauthCodes: number;
  /** OAuth clients unused for OAUTH_CLIENT_IDLE_TTL that no live grant holds. */
  oauthClients: number;
  unattachedUploads: number;
  /** Rows of deleted chats purged (attachments, messages, runs, the chats themselves). */
  deletedChatRows: number;
}

type Rule = (batch: number) => Promise<number>;

/**
 * Everything that grows with use and has had its time (the settings named in RetentionReport,
 * .env.example), deleted oldest first in batches of RETENTION_BATCH_SIZE: each statement finds its
 * rows through an index on what it selects by, so a pass that has nothing to delete reads next to
 * nothing, and holds its locks for one batch. Files go with their rows: a rule with files deletes
 * its batch of rows, then their files, and gives their bytes back to the users' storage quota, in one
 * transaction, which a failed file delete rolls back.
 */
export function createRetention(deps: Pick<OperationDeps, 'config' | 'db' | 'storage' | 'logger'>) {
  const { config, db, storage, logger } = deps;
  const pool = db.pool;

  /** Rows and their files: the rows' deletion commits only once every file is gone. */
  const withFiles =
    (step: (client: PoolClient, batch: number) => Promise<{ rows: number; keys: string[] }>): Rule =>
    (batch) =>
      withTransaction(pool, async (client) => {
        const { rows, keys } = await step(client, batch);
        for (const key of new Set(keys)) await storage.delete(key);
        // The user's quota gets their bytes back in the same commit as the rows.
        await releaseStorage(client, keys);
        return rows;
      });

  const rules: Record<keyof RetentionReport, Rule> = {
    runEvents: (batch) => pruneRunEvents(pool, config.RUN_EVENTS_RETENTION, batch),
    idempotencyKeys: (batch) => deleteExpiredKeys(pool, batch),
    webhookDeliveries: (batch) => deleteOldDeliveries(pool, config.WEBHOOK_DELIVERIES_RETENTION, batch),
    webhookAttemptContents: (batch) =>
      clearOldAttemptContent(pool, config.WEBHOOK_ATTEMPT_CONTENT_RETENTION, batch),
    expiredSessions: (batch) => deleteExpiredSessions(db, config.EXPIRED_SESSIONS_RETENTION, batch),
    oauthGrants: (batch) => deleteEndedGrants(pool, config.ENDED_OAUTH_GRANTS_RETENTION, batch),
    oauthCodes: (batch) => deleteExpiredCodes(pool, batch),
    oauthClients: (batch) => deleteIdleClients(pool, config.OAUTH_CLIENT_IDLE_TTL, batch),
    unattachedUploads: withFiles(async (client, batch) => {
      const keys = await deleteUnattachedUploads(client, config.UNATTACHED_UPLOADS_RETENTION, batch);
      return { rows: keys.length, keys };
    }),
    deletedChatRows: withFiles((client, batch) =>
      purgeDeletedChatStep(client, config.DELETED_CHATS_RETENTION, batch),
    ),
  };

  /**
   * Each rule's batches until one finds nothing, or the pass's share of them is spent. A rule that
   * fails (its files' storage away) is logged and tried again next pass; the others go on.
   */
  const pass = async (): Promise<RetentionReport> => {
    const batch = config.RETENTION_BATCH_SIZE;
    const report = {} as RetentionReport;
    for (const [name, rule] of Object.entries(rules) as [keyof RetentionReport, Rule][]) {
      let total = 0;
      try {
        for (let i = 0; i < MAX_BATCHES_PER_PASS; i++) {
          const count = await rule(batch);
          total += count;
          if (count === 0) break;
        }
      } catch (err) {
        logger.warn(
          { rule: name, err: (err as Error).message },
          'retention rule failed; tried again next pass',
        );
      }
      report[name] = total;
    }
    return report;
  };

  return { pass };
}

export type Retention = ReturnType<typeof createRetention>;
