import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Config } from '../../core/config/config';
import { createDatabase, type Database } from '../../core/db/client';
import { migrate } from '../../core/db/migrator';
import { pruneRunEvents } from '../../core/runs/store';
import { createStorage } from '../../core/storage';
import { reserveStorage } from '../../core/storage/store';
import type { ObjectStorage } from '../../core/storage/storage';
import { createLogger } from '../../core/logging/logger';
import { createRetention, MAX_BATCHES_PER_PASS, type RetentionReport } from '../../operations/retention';
import { testStack } from '../../testkit/stack';

/**
 * Each retention rule deletes what has had its time and nothing else, a batch at a time, and files
 * go with their rows. On a database of its own, so every count is this suite's; files on the real
 * local storage driver.
 */
describe('retention', function () {
  this.timeout(120_000);
  let db: Database;
  let config: Config;
  let storage: ObjectStorage;
  let storageDir: string;
  const BATCH = 10;
  const logger = createLogger({ level: 'silent', name: 'retention-test' });

  before(async () => {
    const stack = await testStack();
    const url = await stack.createDatabase('retention');
    await migrate(url);
    db = createDatabase({ url, poolSize: 4 });
    storageDir = await mkdtemp(path.join(tmpdir(), 'retention-files-'));
    config = stack.config({
      DATABASE_URL: url,
      STORAGE_LOCAL_DIR: storageDir,
      RETENTION_BATCH_SIZE: String(BATCH),
    });
    storage = createStorage(config);
  });
  after(async () => {
    await db?.close();
    await rm(storageDir, { recursive: true, force: true });
  });

  const sql = async <T extends Record<string, unknown>>(text: string, values: unknown[] = []) =>
    (await db.pool.query<T>(text, values)).rows;
  const count = async (text: string, values: unknown[] = []) =>
    Number((await sql<{ n: string }>(`SELECT count(*) AS n FROM ${text}`, values))[0]?.n);
  const pass = (overrides: { storage?: ObjectStorage } = {}): Promise<RetentionReport> =>
    createRetention({ config, db, storage: overrides.storage ?? storage, logger }).pass();
  const exists = (key: string) =>
    storage.stat(key).then(
      () => true,
      () => false,
    );
  const putFile = (key: string) => storage.put(key, Buffer.from(key), { contentType: 'image/png' });

  async function user(): Promise<string> {
    const id = randomUUID();
    await sql(`INSERT INTO "User" (id, email, "passwordHash", "updatedAt") VALUES ($1, $2, 'x', now())`, [
      id,
      `${id}@retention.test`,
    ]);
    return id;
  }

  async function chat(userId: string, deletedAgo: string | null = null): Promise<string> {
    const id = randomUUID();
    await sql(
      `INSERT INTO "Chat" (id, "userId", title, "deletedAt", "updatedAt")
       VALUES ($1, $2, 'kept or not', now() - $3::interval, now())`,
      [id, userId, deletedAgo],
    );
    return id;
  }

  /**
   * A run of the chat with its user message, `events` stream events created `eventsAgo`, and its
   * ending `finishedAgo` (null: still running).
   */
  async function run(
    chatId: string,
    userId: string,
    opts: { finishedAgo: string | null; eventsAgo?: string; events?: number },
  ): Promise<string> {
    const id = randomUUID();
    const messageId = randomUUID();
    await sql(
      `INSERT INTO "Run" (id, "chatId", "userId", "messageId", "assistantMessageId", status, "traceId",
                          "finishedAt", "updatedAt")
       VALUES ($1, $2, $3, $4, $5, CASE WHEN $6::interval IS NULL THEN 'RUNNING' ELSE 'COMPLETE' END::"RunStatus",
               'trace', now() - $6::interval, now())`,
      [id, chatId, userId, messageId, randomUUID(), opts.finishedAgo],
    );
    await sql(
      `INSERT INTO "Message" (id, "chatId", role, "runId", "contentBlocks") VALUES ($1, $2, 'user', $3, '[]')`,
      [messageId, chatId, id],
    );
    // Numbered as run_event_append numbers them: from the chat's counter (migration chat_events).
    const events = opts.events ?? 3;
    await sql(
      `WITH c AS (INSERT INTO "ChatEventSeq" ("chatId", seq) VALUES ($4, $2)
                  ON CONFLICT ("chatId") DO UPDATE SET seq = "ChatEventSeq".seq + $2 RETURNING seq),
            r AS (INSERT INTO "RunEventSeq" ("runId", seq) SELECT $1, seq FROM c)
       INSERT INTO "RunEvent" ("runId", "chatId", seq, type, data, "createdAt")
       SELECT $1, $4, c.seq - $2 + s, 'status', '{}', now() - $3::interval FROM c, generate_series(1, $2) s`,
      [id, events, opts.eventsAgo ?? opts.finishedAgo ?? '1 minute', chatId],
    );
    return id;
  }

  const eventsOf = (runId: string) => count(`"RunEvent" WHERE "runId" = $1`, [runId]);

  it('prunes the stream events of runs that ended past RUN_EVENTS_RETENTION, whole runs a batch at a time, and no others', async () => {
    const u = await user();
    const c = await chat(u);
    const old = await Promise.all(
      Array.from({ length: 6 }, () => run(c, u, { finishedAgo: '8 days', events: 4 })),
    );
    // Its events are as old, but it ended yesterday (a plan waited a week): kept.
    const longWait = await run(c, u, { finishedAgo: '1 day', eventsAgo: '8 days' });
    const running = await run(c, u, { finishedAgo: null, eventsAgo: '9 days' });
    const recent = await run(c, u, { finishedAgo: '1 hour' });

    // A batch of ten events reaches into the third old run: that run goes whole, its four events.
    assert.equal(await pruneRunEvents(db.pool, config.RUN_EVENTS_RETENTION, BATCH), 12);
    const left = await Promise.all(old.map(eventsOf));
    assert.deepEqual(
      [...left].sort(),
      [0, 0, 0, 4, 4, 4],
      'whole runs went, and only as many as the batch reached',
    );

    const report = await pass();
    assert.equal(report.runEvents, 12);
    for (const id of old) assert.equal(await eventsOf(id), 0);
    assert.equal(await eventsOf(longWait), 3);
    assert.equal(await eventsOf(running), 3);
    assert.equal(await eventsOf(recent), 3);
    assert.equal(await count(`"RunEventSeq" WHERE "runId" = ANY($1)`, [old]), 6, 'the counters stay');
  });

  it('deletes idempotency keys past their 24 hours, and no younger one', async () => {
    const u = await user();
    const key = (age: string) =>
      sql(
        `INSERT INTO "IdempotencyKey" ("userId", key, operation, fingerprint, owner, "lockedUntil", "createdAt")
         VALUES ($1, $2, 'sendMessage', 'f', $3, now(), now() - $4::interval)`,
        [u, randomUUID(), randomUUID(), age],
      );
    for (let i = 0; i < 15; i++) await key('25 hours');
    await key('23 hours');
    assert.equal((await pass()).idempotencyKeys, 15);
    assert.equal(await count(`"IdempotencyKey" WHERE "userId" = $1`, [u]), 1);
  });

  async function endpoint(userId: string): Promise<string> {
    const id = randomUUID();
    await sql(
      `INSERT INTO "WebhookEndpoint" (id, "userId", url, events, "secretEncrypted")
       VALUES ($1, $2, 'https://hooks.example.com/x', ARRAY['agent.completed'], 'sealed')`,
      [id, userId],
    );
    return id;
  }

  async function delivery(endpointId: string, status: string, ago: string): Promise<string> {
    const id = randomUUID();
    const key = randomUUID();
    await sql(
      `INSERT INTO "WebhookDelivery" (id, "endpointId", event, "idempotencyKey", "envelopeId", payload, status,
                                      "createdAt", "updatedAt")
       VALUES ($1, $2, 'agent.completed', $3, 'wh:' || $3, '{}', $4::"WebhookDeliveryStatus",
               now() - $5::interval, now() - $5::interval)`,
      [id, endpointId, key, status, ago],
    );
    await sql(
      `INSERT INTO "WebhookAttempt" (id, "deliveryId", series, attempt, "startedAt", "durationMs", "statusCode",
                                     "signedContent", "requestHeaders")
       VALUES ($1, $2, 1, 1, now() - $3::interval, 100, 200, '1.{}', '{"webhook-id": "x"}')`,
      [randomUUID(), id, ago],
    );
    return id;
  }

  it('deletes settled deliveries past WEBHOOK_DELIVERIES_RETENTION with their attempts, never a pending one', async () => {
    const e = await endpoint(await user());
    const old = [
      ...(await Promise.all(Array.from({ length: 12 }, () => delivery(e, 'DELIVERED', '31 days')))),
      await delivery(e, 'FAILED', '40 days'),
    ];
    const pending = await delivery(e, 'PENDING', '40 days');
    const recent = await delivery(e, 'DELIVERED', '29 days');
    const report = await pass();
    assert.equal(report.webhookDeliveries, 13);
    assert.equal(await count(`"WebhookDelivery" WHERE id = ANY($1)`, [old]), 0);
    assert.equal(await count(`"WebhookAttempt" WHERE "deliveryId" = ANY($1)`, [old]), 0);
    assert.deepEqual(
      (
        await sql<{ id: string }>(
          `SELECT id FROM "WebhookDelivery" WHERE "endpointId" = $1 ORDER BY "createdAt"`,
          [e],
        )
      ).map((r) => r.id),
      [pending, recent],
    );
    assert.equal(await count(`"WebhookAttempt" WHERE "deliveryId" = ANY($1)`, [[pending, recent]]), 2);
  });

  it("clears an attempt's signed content and headers past WEBHOOK_ATTEMPT_CONTENT_RETENTION, keeping its outcome", async () => {
    const e = await endpoint(await user());
    const old = await delivery(e, 'DELIVERED', '8 days');
    const recent = await delivery(e, 'DELIVERED', '6 days');
    // The deliveries rule found nothing of these; this one cleared the old attempt only.
    const report = await pass();
    assert.ok(report.webhookAttemptContents >= 1);
    const attempts = await sql<{
      deliveryId: string;
      statusCode: number;
      signedContent: string | null;
      requestHeaders: unknown;
    }>(
      `SELECT "deliveryId", "statusCode", "signedContent", "requestHeaders" FROM "WebhookAttempt"
        WHERE "deliveryId" = ANY($1)`,
      [[old, recent]],
    );
    const of = (id: string) => attempts.find((a) => a.deliveryId === id);
    assert.deepEqual(of(old), {
      deliveryId: old,
      statusCode: 200,
      signedContent: null,
      requestHeaders: null,
    });
    assert.equal(of(recent)?.signedContent, '1.{}');
    assert.deepEqual(of(recent)?.requestHeaders, { 'webhook-id': 'x' });
  });

  it('deletes sessions expired past EXPIRED_SESSIONS_RETENTION, and no other', async () => {
    const u = await user();
    const session = (expiresIn: string) =>
      sql(
        `INSERT INTO "Session" (id, "userId", "tokenHash", "expiresAt") VALUES ($1, $2, $3, now() + $4::interval)`,
        [randomUUID(), u, randomUUID(), expiresIn],
      );
    for (let i = 0; i < 11; i++) await session('-2 days');
    await session('-12 hours');
    await session('6 days');
    assert.equal((await pass()).expiredSessions, 11);
    assert.equal(await count(`"Session" WHERE "userId" = $1`, [u]), 2);
  });

  it('deletes OAuth grants revoked or expired past ENDED_OAUTH_GRANTS_RETENTION, with their spent tokens', async () => {
    const u = await user();
    const client = `client-${randomUUID()}`;
    await sql(`INSERT INTO "OAuthClient" (id, metadata) VALUES ($1, '{}')`, [client]);
    const grant = async (revokedAgo: string | null, refreshExpiresIn: string) => {
      const id = randomUUID();
      await sql(
        `INSERT INTO "OAuthGrant" (id, "userId", "clientId", "clientName", "accessTokenHash", "accessExpiresAt",
                                   "refreshTokenHash", "refreshExpiresAt", scopes, "accessScopes", "revokedAt")
         VALUES ($1, $2, $3, 'c', $4, now(), $5, now() + $6::interval, ARRAY['read'], ARRAY['read'],
                 now() - $7::interval)`,
        [id, u, client, randomUUID(), randomUUID(), refreshExpiresIn, revokedAgo],
      );
      await sql(`INSERT INTO "OAuthSpentRefreshToken" ("tokenHash", "grantId") VALUES ($1, $2)`, [
        randomUUID(),
        id,
      ]);
      return id;
    };
    const revoked = await grant('31 days', '10 days');
    const expired = await grant(null, '-31 days');
    const live = await grant(null, '10 days');
    const recentlyRevoked = await grant('29 days', '10 days');
    const recentlyExpired = await grant(null, '-29 days');
    assert.equal((await pass()).oauthGrants, 2);
    const left = (await sql<{ id: string }>(`SELECT id FROM "OAuthGrant" WHERE "userId" = $1`, [u])).map(
      (r) => r.id,
    );
    assert.deepEqual(new Set(left), new Set([live, recentlyRevoked, recentlyExpired]));
    assert.equal(await count(`"OAuthSpentRefreshToken" WHERE "grantId" = ANY($1)`, [[revoked, expired]]), 0);
  });

  async function upload(
    userId: string,
    ago: string,
    messageId: string | null = null,
    chatId: string | null = null,
  ) {
    const key = `attachments/${userId}/${randomUUID()}`;
    await putFile(key);
    await sql(
      `INSERT INTO "Attachment" (id, "userId", "chatId", "messageId", "storageKey", filename, "mimeType", "sizeBytes",
                                 "createdAt")
       VALUES ($1, $2, $3, $4, $5, 'photo.png', 'image/png', 10, now() - $6::interval)`,
      [randomUUID(), userId, chatId, messageId, key, ago],
    );
    return key;
  }

  it('deletes uploads no message took within UNATTACHED_UPLOADS_RETENTION, rows and files, and keeps them when a file cannot be deleted', async () => {
    const u = await user();
    const c = await chat(u);
    const r = await run(c, u, { finishedAgo: '1 hour' });
    const [{ messageId } = { messageId: '' }] = await sql<{ messageId: string }>(
      `SELECT "messageId" FROM "Run" WHERE id = $1`,
      [r],
    );
    const old = [];
    for (let i = 0; i < 12; i++) old.push(await upload(u, '8 days', null, i % 2 ? c : null));
    const attached = await upload(u, '30 days', messageId, c);
    const recent = await upload(u, '6 days');
    // Counted against the user's storage quota as the upload route counts them.
    const SIZE = 100;
    await reserveStorage(db.pool, {
      userId: u,
      files: [...old, attached, recent].map((storageKey) => ({ storageKey, sizeBytes: SIZE })),
      maxBytes: 1e9,
    });
    const storedBytes = async () =>
      Number(
        (await sql<{ b: string }>(`SELECT "storedBytes"::text AS b FROM "User" WHERE id = $1`, [u]))[0]?.b,
      );

    // Storage that cannot delete one file: that batch's rows stay, to be tried again.
    const [stuck] = old;
    const failing: ObjectStorage = {
      ...storage,
      delete: (key) => (key === stuck ? Promise.reject(new Error('storage away')) : storage.delete(key)),
    };
    assert.equal((await pass({ storage: failing })).unattachedUploads, 0);
    assert.equal(await count(`"Attachment" WHERE "storageKey" = ANY($1)`, [old]), 12, 'the rows stay');
    assert.equal(await exists(stuck as string), true);
    assert.equal(await storedBytes(), 14 * SIZE, 'the quota keeps what stays');

    const report = await pass();
    assert.equal(report.unattachedUploads, 12);
    assert.equal(await count(`"Attachment" WHERE "storageKey" = ANY($1)`, [old]), 0);
    for (const key of old) assert.equal(await exists(key), false, `${key} deleted`);
    assert.equal(await storedBytes(), 2 * SIZE, 'the deleted files gave their bytes back');
    assert.equal(await count(`"StoredFile" WHERE "storageKey" = ANY($1)`, [old]), 0);
    for (const key of [attached, recent]) {
      assert.equal(await count(`"Attachment" WHERE "storageKey" = $1`, [key]), 1);
      assert.equal(await exists(key), true);
    }
  });

  it('purges a chat deleted past DELETED_CHATS_RETENTION whole, in batches, files included; no other chat', async () => {
    const u = await user();
    const gone = await chat(u, '31 days');
    const runs = [];
    for (let i = 0; i < 12; i++) runs.push(await run(gone, u, { finishedAgo: '40 days' }));
    // A crop of the last run, charged, with its output on storage and on the model's message.
    const toolCall = randomUUID();
    const toolKey = `tools/${u}/${toolCall}/photo-crop.png`;
    await putFile(toolKey);
    await sql(
      `INSERT INTO "ToolCall" (id, "userId", "chatId", "runId", "toolName", status, input, result, "creditCost")
       VALUES ($1, $2, $3, $4, 'crop_image', 'SUCCEEDED', '{}',
               jsonb_build_object('assets', jsonb_build_array(jsonb_build_object('filename', 'photo-crop.png'))), 1)`,
      [toolCall, u, gone, runs[11]],
    );
    await sql(
      `INSERT INTO "CreditLedgerEntry" (id, "userId", "toolCallId", amount, reason) VALUES ($1, $2, $3, 1, 'tool:crop_image')`,
      [randomUUID(), u, toolCall],
    );
    const [{ messageId } = { messageId: '' }] = await sql<{ messageId: string }>(
      `SELECT "messageId" FROM "Run" WHERE id = $1`,
      [runs[0]],
    );
    const uploaded = await upload(u, '40 days', messageId, gone);
    const kept = await chat(u, '29 days');
    const keptRun = await run(kept, u, { finishedAgo: '40 days' });
    const live = await chat(u);
    const liveRun = await run(live, u, { finishedAgo: '40 days' });
    // A deleted chat whose run has not ended yet is left for later.
    const busy = await chat(u, '40 days');
    await run(busy, u, { finishedAgo: null });

    const report = await pass();
    // 1 attachment, 12 messages (two batches), 12 runs (two batches), the chat.
    assert.equal(report.deletedChatRows, 1 + 12 + 12 + 1);
    assert.equal(await count(`"Chat" WHERE id = $1`, [gone]), 0);
    assert.equal(await count(`"Message" WHERE "chatId" = $1`, [gone]), 0);
    assert.equal(await count(`"Run" WHERE id = ANY($1)`, [runs]), 0);
    assert.equal(await count(`"RunEvent" WHERE "runId" = ANY($1)`, [runs]), 0);
    assert.equal(await count(`"ToolCall" WHERE id = $1`, [toolCall]), 0);
    assert.equal(await count(`"CreditLedgerEntry" WHERE "toolCallId" = $1`, [toolCall]), 0);
    assert.equal(await exists(toolKey), false);
    assert.equal(await exists(uploaded), false);
    for (const [c, r] of [
      [kept, keptRun],
      [live, liveRun],
    ] as const) {
      assert.equal(await count(`"Chat" WHERE id = $1`, [c]), 1);
      assert.equal(await count(`"Message" WHERE "chatId" = $1`, [c]), 1);
      assert.equal(await eventsOf(r), 0, 'its events went by their own rule');
    }
    assert.equal(await count(`"Chat" WHERE id = $1`, [busy]), 1);
  });

  it("keeps the files a fork's attachments still name when it purges the fork's source, until the fork goes too", async () => {
    const u = await user();
    const source = await chat(u, '31 days');
    const sourceRun = await run(source, u, { finishedAgo: '40 days' });
    const [{ messageId } = { messageId: '' }] = await sql<{ messageId: string }>(
      `SELECT "messageId" FROM "Run" WHERE id = $1`,
      [sourceRun],
    );
    const uploaded = await upload(u, '40 days', messageId, source);
    // A crop of the source's run, its output on the run's answer.
    const toolCall = randomUUID();
    const toolKey = `tools/${u}/${toolCall}/photo-crop.png`;
    await putFile(toolKey);
    await sql(
      `INSERT INTO "ToolCall" (id, "userId", "chatId", "runId", "toolName", status, input, result)
       VALUES ($1, $2, $3, $4, 'crop_image', 'SUCCEEDED', '{}',
               jsonb_build_object('assets', jsonb_build_array(jsonb_build_object('filename', 'photo-crop.png'))))`,
      [toolCall, u, source, sourceRun],
    );
    await reserveStorage(db.pool, {
      userId: u,
      files: [uploaded, toolKey].map((storageKey) => ({ storageKey, sizeBytes: 10 })),
      maxBytes: 1e9,
    });
    // The fork: its own message and attachment rows, naming the same stored files.
    const fork = await chat(u);
    const copy = randomUUID();
    await sql(`INSERT INTO "Message" (id, "chatId", role, "contentBlocks") VALUES ($1, $2, 'user', '[]')`, [
      copy,
      fork,
    ]);
    for (const key of [uploaded, toolKey])
      await sql(
        `INSERT INTO "Attachment" (id, "userId", "chatId", "messageId", "storageKey", filename, "mimeType", "sizeBytes")
         VALUES ($1, $2, $3, $4, $5, 'photo.png', 'image/png', 10)`,
        [randomUUID(), u, fork, copy, key],
      );

    await pass();
    assert.equal(await count(`"Chat" WHERE id = $1`, [source]), 0, 'the source is purged');
    for (const key of [uploaded, toolKey]) {
      assert.equal(await exists(key), true, `${key} stays: the fork names it`);
      assert.equal(await count(`"StoredFile" WHERE "storageKey" = $1`, [key]), 1, 'and counts once');
      assert.equal(await count(`"Attachment" WHERE "storageKey" = $1 AND "chatId" = $2`, [key, fork]), 1);
    }

    await sql(`UPDATE "Chat" SET "deletedAt" = now() - interval '31 days' WHERE id = $1`, [fork]);
    await pass();
    for (const key of [uploaded, toolKey]) {
      assert.equal(await exists(key), false, `${key} goes with the last chat naming it`);
      assert.equal(await count(`"StoredFile" WHERE "storageKey" = $1`, [key]), 0);
    }
  });

  it(`stops a rule after ${MAX_BATCHES_PER_PASS} batches in one pass, and goes on in the next`, async () => {
    const u = await user();
    const total = MAX_BATCHES_PER_PASS * BATCH + 5;
    await sql(
      `INSERT INTO "Session" (id, "userId", "tokenHash", "expiresAt")
       SELECT gen_random_uuid(), $1, md5(random()::text || s), now() - interval '3 days' FROM generate_series(1, $2) s`,
      [u, total],
    );
    assert.equal((await pass()).expiredSessions, MAX_BATCHES_PER_PASS * BATCH);
    assert.equal((await pass()).expiredSessions, 5);
    assert.equal(await count(`"Session" WHERE "userId" = $1`, [u]), 0);
  });
});
