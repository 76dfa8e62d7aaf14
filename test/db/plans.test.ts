import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { Pool, PoolClient, QueryConfig } from 'pg';
import {
  COMMON_TITLE_WORD,
  HEAVY_USER_ID,
  LONG_CHAT_ID,
  ORDINARY_USER_ID,
  generateDatabase,
  generatedId,
} from '../../bench/generate';
import {
  purgeDeletedChatStep,
  selectChat,
  selectChats,
  selectMessages,
  softDeleteChat,
} from '../../core/chats/store';
import { createDatabase, type Database } from '../../core/db/client';
import { HISTORY_READ_LIMIT } from '../../core/model/context';
import { claimKey, deleteExpiredKeys, readKey } from '../../core/idempotency/store';
import { apiKeyIsLive, checkApiKey, deleteExpiredSessions, selectSession } from '../../core/identity/store';
import { checkAccessToken, deleteEndedGrants } from '../../core/oauth/store';
import {
  finishRun,
  gateStep,
  insertTurn,
  listRunsAwaitingSignal,
  listStaleRuns,
  listUnfinishedRuns,
  pruneRunEvents,
  requestChatRunCancel,
  requestRunCancel,
  selectActiveRun,
  selectRunEvents,
  selectRunSnapshot,
  writeRunText,
} from '../../core/runs/store';
import { selectChatRuns, selectUserRuns } from '../../core/runs/list';
import { encodeCursor } from '../../core/schemas/common';
import { exampleToolResult } from '../../core/schemas/examples';
import { openToolCall, recordToolSuccess, selectToolAllowance } from '../../core/tools/calls';
import { TOOL_NAMES } from '../../core/tools/names';
import { deleteUnattachedUploads } from '../../core/uploads/store';
import {
  clearOldAttemptContent,
  deleteOldDeliveries,
  listUnstartedDeliveries,
  selectDeliveries,
  selectDelivery,
  selectEndpoints,
} from '../../core/webhooks/store';
import { testStack } from '../../testkit/stack';

/**
 * The plans of the hot statements on a generated database (bench/generate.ts, ANALYZEd as
 * autovacuum leaves a table), each taken from the store function a route or the reconciler calls,
 * with the arguments they pass: the planner's own pick, with the statistics of a database a year
 * old, must read no table that grows with use from end to end, and (run, then rolled back) must
 * read about what it returns or changes, not what it passes over. At CI's scale the data keeps the
 * shape of the full size (a user with a quarter of the chats, a long chat, a year of deliveries),
 * so a plan that scans or walks past rows here does so at any size.
 */

/**
 * Small enough for CI (well under a minute to generate). PLAN_TEST_SCALE=1 checks the full size;
 * PLAN_TEST_DATABASE_URL, a database generated before (npm run bench:generate), is checked as it is
 * (every statement's effect rolled back).
 */
const SCALE = Number(process.env.PLAN_TEST_SCALE ?? '0.02');
const GENERATED_URL = process.env.PLAN_TEST_DATABASE_URL;

/** The tables that grow with use: none may be read whole. */
const LARGE_TABLES = new Set([
  'User',
  'Session',
  'ApiKey',
  'OAuthGrant',
  'Chat',
  'Message',
  'Attachment',
  'Run',
  'RunEventSeq',
  'RunEvent',
  'ToolCall',
  'Waitpoint',
  'WebhookDelivery',
  'WebhookAttempt',
  'CreditLedgerEntry',
  'IdempotencyKey',
]);

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  'Rows Removed by Filter'?: number;
  'Rows Removed by Index Recheck'?: number;
  Plans?: PlanNode[];
}

interface Recorded {
  label: string;
  sql: string;
  plan: PlanNode;
  run: PlanNode;
}

function* nodes(node: PlanNode): Generator<PlanNode> {
  yield node;
  for (const child of node.Plans ?? []) yield* nodes(child);
}

/** Rows the executed statement read from the large tables: returned by a scan, or passed over by it. */
function rowsRead(run: PlanNode): number {
  let read = 0;
  for (const n of nodes(run)) {
    if (!n['Relation Name'] || !LARGE_TABLES.has(n['Relation Name'])) continue;
    const perLoop =
      (n['Actual Rows'] ?? 0) +
      (n['Rows Removed by Filter'] ?? 0) +
      (n['Rows Removed by Index Recheck'] ?? 0);
    read += perLoop * (n['Actual Loops'] ?? 1);
  }
  return read;
}

/** What the statement answered, or the rows its writes took in. */
function rowsProduced(run: PlanNode): number {
  let produced = (run['Actual Rows'] ?? 0) * (run['Actual Loops'] ?? 1);
  for (const n of nodes(run))
    if (n['Node Type'] === 'ModifyTable')
      for (const input of n.Plans ?? [])
        produced += (input['Actual Rows'] ?? 0) * (input['Actual Loops'] ?? 1);
  return produced;
}

/**
 * A Pool for the store functions that runs each statement on one connection inside the test's
 * transaction, after taking its plan twice: as the planner picks it (EXPLAIN) and as it runs
 * (EXPLAIN ANALYZE, rolled back to a savepoint, so the real execution that follows sees nothing
 * of it).
 */
class PlanRecorder {
  readonly recorded: Recorded[] = [];
  label = '';
  constructor(private readonly client: PoolClient) {}

  async query(config: string | QueryConfig, values?: unknown[]) {
    const text = typeof config === 'string' ? config : config.text;
    const params = (typeof config === 'string' ? values : (config.values ?? values)) ?? [];
    const explain = async (options: string) =>
      ((
        await this.client.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(
          `EXPLAIN (${options}) ${text}`,
          params,
        )
      ).rows[0]?.['QUERY PLAN'][0].Plan ?? { 'Node Type': 'none' }) as PlanNode;
    await this.client.query('SAVEPOINT plan');
    const plan = await explain('FORMAT JSON');
    const run = await explain('ANALYZE, BUFFERS, FORMAT JSON');
    await this.client.query('ROLLBACK TO SAVEPOINT plan');
    this.recorded.push({ label: this.label, sql: text, plan, run });
    return typeof config === 'string' ? this.client.query(config, params) : this.client.query(config);
  }

  get pool(): Pool {
    return this as unknown as Pool;
  }
  get asClient(): PoolClient {
    return this as unknown as PoolClient;
  }
  get db(): Database {
    return { pool: this.pool, bookkeeping: this.pool } as Database;
  }
}

describe('plans of the hot statements on a generated database', function () {
  this.timeout(600_000);
  let db: Database;
  let client: PoolClient;
  let recorder: PlanRecorder;
  /** What the cases look up once, outside the recorder. */
  const known = {
    deepCursor: '',
    middleCursor: '',
    finishedRun: '',
    eventRun: { userId: '', chatId: '', runId: '' },
    prunedRun: { userId: '', chatId: '', runId: '' },
    deliveryId: '',
  };

  before(async () => {
    let url = GENERATED_URL;
    if (!url) {
      url = await (await testStack()).createDatabase('plans');
      await generateDatabase(url, SCALE);
    }
    db = createDatabase({ url, poolSize: 2 });
    const one = async <T extends Record<string, unknown>>(text: string, values: unknown[] = []) => {
      const row = (await db.pool.query<T>(text, values)).rows[0];
      assert.ok(row, `no row for ${text}`);
      return row;
    };
    const heavyChats = Number(
      (await one<{ n: string }>(`SELECT count(*) AS n FROM "Chat" WHERE "userId" = $1`, [HEAVY_USER_ID])).n,
    );
    const deep = await one<{ at: Date; id: string }>(
      `SELECT "activityAt" AS at, id FROM "Chat" WHERE "userId" = $1 AND "deletedAt" IS NULL
        ORDER BY "activityAt" DESC, id DESC OFFSET $2 LIMIT 1`,
      [HEAVY_USER_ID, Math.floor(heavyChats / 2)],
    );
    known.deepCursor = encodeCursor(deep);
    const middle = await one<{ at: Date; id: string }>(
      `SELECT "createdAt" AS at, id FROM "Message" WHERE "chatId" = $1 ORDER BY "createdAt", id
        OFFSET (SELECT count(*) / 2 FROM "Message" WHERE "chatId" = $1) LIMIT 1`,
      [LONG_CHAT_ID],
    );
    known.middleCursor = encodeCursor(middle);
    known.finishedRun = (
      await one<{ id: string }>(
        `SELECT id FROM "Run" WHERE "chatId" = $1 ORDER BY "createdAt" DESC LIMIT 1`,
        [LONG_CHAT_ID],
      )
    ).id;
    const scopeOf = (where: string) =>
      one<{ userId: string; chatId: string; runId: string }>(
        `SELECT r."userId", r."chatId", r.id AS "runId" FROM "Run" r JOIN "Chat" c ON c.id = r."chatId"
          WHERE c."deletedAt" IS NULL AND ${where} LIMIT 1`,
      );
    known.eventRun = await scopeOf(
      `r.id = (SELECT "runId" FROM "RunEvent" ORDER BY "createdAt" DESC LIMIT 1)`,
    );
    known.prunedRun = await scopeOf(
      `r."userId" = '${HEAVY_USER_ID}' AND r."finishedAt" < now() - interval '30 days'`,
    );
    known.deliveryId = (
      await one<{ id: string }>(
        `SELECT id FROM "WebhookDelivery" WHERE "endpointId" = $1 ORDER BY "createdAt" DESC LIMIT 1`,
        [generatedId('endpoint:0')],
      )
    ).id;
    client = await db.pool.connect();
    await client.query('BEGIN');
    recorder = new PlanRecorder(client);
  });

  after(async () => {
    await client?.query('ROLLBACK').catch(() => undefined);
    client?.release();
    await db?.close();
  });

  /** Runs the case's statements through the recorder and checks each of them. */
  const check = (work: (r: PlanRecorder) => Promise<unknown>, options: { readCheck?: boolean } = {}) =>
    async function (this: Mocha.Context) {
      const label = this.test?.title ?? '';
      recorder.label = label;
      const from = recorder.recorded.length;
      await work(recorder);
      const mine = recorder.recorded.slice(from);
      assert.ok(mine.length > 0, 'the case ran no statement');
      for (const statement of mine) {
        const shown = statement.sql.replace(/\s+/g, ' ').slice(0, 160);
        for (const n of nodes(statement.plan)) {
          assert.ok(
            !(n['Node Type'] === 'Seq Scan' && LARGE_TABLES.has(n['Relation Name'] ?? '')),
            `reads "${n['Relation Name']}" whole (Seq Scan) in: ${shown}`,
          );
        }
        if (options.readCheck === false) continue;
        const read = rowsRead(statement.run);
        const produced = rowsProduced(statement.run);
        assert.ok(
          read <= 100 + 10 * produced,
          `reads ${read} rows of large tables for ${produced} it answers or writes, in: ${shown}`,
        );
      }
    };

  const H = HEAVY_USER_ID;
  const L = LONG_CHAT_ID;

  describe('reads of the routes', () => {
    it(
      'list chats, first page (the heavy user)',
      check((r) => selectChats(r.pool, H, { limit: 20 })),
    );
    it(
      'list chats, a deep cursor',
      check((r) => selectChats(r.pool, H, { limit: 20, cursor: known.deepCursor })),
    );
    it(
      'list chats, an ordinary user',
      check((r) => selectChats(r.pool, ORDINARY_USER_ID, { limit: 20 })),
    );
    it(
      'title search, no match',
      check((r) => selectChats(r.pool, H, { limit: 20, q: 'zqxj' })),
    );
    // The trigram index finds the user's matches unordered: the page is the newest of them all,
    // so a common word reads every chat of the user it is in (1 % of them: at full size 477 rows
    // for 21), a cost that grows with the user's matches but not with the database or the user's
    // other chats. Its plan is checked here; its time is the bench's row.
    it(
      'title search, a word in 1 % of titles',
      check((r) => selectChats(r.pool, H, { limit: 20, q: COMMON_TITLE_WORD }), { readCheck: false }),
    );
    it(
      'favourites',
      check((r) => selectChats(r.pool, H, { limit: 20, favorite: true })),
    );
    it(
      'not favourites',
      check((r) => selectChats(r.pool, H, { limit: 20, favorite: false })),
    );
    it(
      'open a chat',
      check((r) => selectChat(r.pool, H, L)),
    );
    it(
      'messages, first page',
      check((r) => selectMessages(r.pool, L, { limit: 50, order: 'asc' })),
    );
    it(
      'messages, last page',
      check((r) => selectMessages(r.pool, L, { limit: 50, order: 'desc' })),
    );
    it(
      'messages, a page in the middle',
      check((r) => selectMessages(r.pool, L, { limit: 50, order: 'asc', cursor: known.middleCursor })),
    );
    it(
      'poll a finished run',
      check((r) => selectRunSnapshot(r.pool, { userId: H, chatId: L, runId: known.finishedRun })),
    );
    it(
      'open a run stream',
      check((r) => selectRunEvents(r.pool, known.eventRun, 0, 200)),
    );
    it(
      'resume the stream of a pruned run',
      check((r) => selectRunEvents(r.pool, known.prunedRun, 1, 0)),
    );
    it(
      "a chat's active run",
      check((r) => selectActiveRun(r.pool, H, L)),
    );
    it(
      "list runs, first page (the heavy user's)",
      check((r) => selectUserRuns(r.pool, H, { limit: 20 })),
    );
    it(
      'list runs of two statuses',
      check((r) => selectUserRuns(r.pool, H, { limit: 20, status: ['COMPLETE', 'FAILED'] })),
    );
    it(
      'list runs carrying a metadata pair',
      check((r) => selectUserRuns(r.pool, H, { limit: 20, metadata: { customer: 'acme' } })),
    );
    it(
      "list a chat's runs (the long chat)",
      check((r) => selectChatRuns(r.pool, { userId: H, chatId: L }, { limit: 20 })),
    );
    it(
      "an endpoint's deliveries",
      check((r) => selectDeliveries(r.pool, H, generatedId('endpoint:0'), { limit: 50 })),
    );
    it(
      'a delivery',
      check((r) => selectDelivery(r.pool, H, known.deliveryId)),
    );
    it(
      'webhook endpoints',
      check((r) => selectEndpoints(r.pool, H, { limit: 50 })),
    );
  });

  describe('credentials and keys', () => {
    it(
      'API key check',
      check((r) =>
        checkApiKey(r.db, {
          keyHash: generatedHash('keyhash:0'),
          counters: [{ name: 'api', points: 1 }],
          now: Date.now(),
        }),
      ),
    );
    it(
      'API key still live (a stream)',
      check((r) => apiKeyIsLive(r.db, generatedId('apikey:0'))),
    );
    it(
      'console session',
      check((r) => selectSession(r.db, generatedHash('sessionhash:0'))),
    );
    it(
      'OAuth access token',
      check((r) => checkAccessToken(r.pool, generatedHash('access:0'))),
    );
    it(
      'idempotency key',
      check(async (r) => {
        await readKey(r.pool, H, randomUUID());
        await claimKey(r.pool, {
          userId: H,
          key: randomUUID(),
          operation: 'sendMessage',
          fingerprint: 'f',
          owner: randomUUID(),
          leaseMs: 30_000,
        });
      }),
    );
    it(
      'tool allowance',
      check((r) => selectToolAllowance(r.pool, H, '1')),
    );
  });

  describe("a turn's statements, in order", () => {
    const turn = { runId: randomUUID(), messageId: randomUUID(), assistantMessageId: randomUUID() };
    const toolCallId = randomUUID();
    const admit = (r: PlanRecorder, ids: typeof turn, chatId: string, newChatTitle: string | null) =>
      insertTurn(r.pool, {
        ...ids,
        chatId,
        userId: H,
        newChatTitle,
        planMode: false,
        traceId: 'trace',
        via: 'rest',
        contentBlocks: [{ type: 'text', text: 'hello' }],
        attachmentIds: [],
        uploads: [],
        maxActiveRuns: 1_000_000,
        metadata: {},
        closingSeconds: 10,
        defaults: { model: 'local', instructions: 'Be brief.', maxSteps: 8, tools: [...TOOL_NAMES] },
        settings: {},
        maxStepsCap: 8,
        budget: null,
        onActiveRun: 'reject',
        maxQueued: 10,
      });

    it(
      'send into a new chat',
      check(async (r) => {
        const admitted = await admit(
          r,
          { runId: randomUUID(), messageId: randomUUID(), assistantMessageId: randomUUID() },
          randomUUID(),
          'a new chat',
        );
        assert.equal(typeof admitted === 'object' && admitted.admitted, true);
      }),
    );
    it(
      'send into the long chat',
      check(async (r) => {
        const admitted = await admit(r, turn, L, null);
        assert.equal(typeof admitted === 'object' && admitted.admitted, true);
      }),
    );
    it(
      'poll a running run',
      check((r) => selectRunSnapshot(r.pool, { userId: H, chatId: L, runId: turn.runId })),
    );
    it(
      "a model step's gate and history",
      check((r) =>
        gateStep(r.pool, {
          runId: turn.runId,
          triggerRunId: 'execution',
          step: 1,
          historyLimit: HISTORY_READ_LIMIT,
        }),
      ),
    );
    it(
      'streamed text',
      check((r) => writeRunText(r.pool, { runId: turn.runId, text: 'Hel', step: 1 })),
    );
    it(
      'a tool call opens and succeeds',
      check(async (r) => {
        const opened = await openToolCall(r.pool, {
          toolCallId,
          toolName: 'crop_image',
          input: {},
          userId: H,
          chatId: L,
          runId: turn.runId,
          price: '1',
          maxActive: 100,
        });
        assert.equal(opened.outcome, 'opened');
        await recordToolSuccess(r.pool, { toolCallId, userId: H, result: exampleToolResult });
      }),
    );
    it(
      'the run ends',
      check(async (r) => {
        const ended = await finishRun(r.pool, {
          runId: turn.runId,
          status: 'COMPLETE',
          error: null,
          text: 'Hello.',
          contentBlocks: [{ type: 'text', text: 'Hello.' }],
          images: [],
          waitpointStatus: 'CANCELLED',
        });
        assert.equal(ended?.status, 'COMPLETE');
      }),
    );
    it(
      'a cancel, and a chat deleted',
      check(async (r) => {
        const ids = { runId: randomUUID(), messageId: randomUUID(), assistantMessageId: randomUUID() };
        const chatId = randomUUID();
        await admit(r, ids, chatId, 'to be deleted');
        await requestRunCancel(r.pool, { userId: H, chatId, runId: ids.runId });
        assert.equal(await softDeleteChat(r.pool, H, chatId), true);
        await requestChatRunCancel(r.pool, chatId);
      }),
    );
  });

  // A row's deletion runs its foreign keys' actions (cascade, set null) as statements of their own,
  // which no plan above shows: each finds the referencing rows by an index leading with its columns.
  it('every foreign key to a table whose rows are deleted leads an index', async () => {
    const { rows } = await db.pool.query<{ fk: string }>(
      `SELECT c.conrelid::regclass::text || '.' || c.conname AS fk
         FROM pg_constraint c
        WHERE c.contype = 'f' AND c.confrelid::regclass::text = ANY($1)
          AND NOT EXISTS (SELECT 1 FROM pg_index i WHERE i.indrelid = c.conrelid
                             AND (i.indkey::int2[])[0:cardinality(c.conkey) - 1] = c.conkey)
        ORDER BY 1`,
      [
        [
          '"Chat"',
          '"Message"',
          '"Run"',
          '"Attachment"',
          '"ToolCall"',
          '"WebhookDelivery"',
          '"Session"',
          '"OAuthGrant"',
        ],
      ],
    );
    assert.deepEqual(
      rows.map((r) => r.fk),
      [],
    );
  });

  describe("the reconciler's looks", () => {
    it(
      'stale runs',
      check((r) => listStaleRuns(r.pool)),
    );
    it(
      'lost plan decisions',
      check((r) => listRunsAwaitingSignal(r.pool)),
    );
    it(
      'deliveries never started',
      check((r) => listUnstartedDeliveries(r.pool)),
    );
    it(
      'executions closed',
      check((r) => listUnfinishedRuns(r.pool, [known.finishedRun, randomUUID()])),
    );
  });

  // Each rule once on the year's backlog, then (the backlog drained, as every pass after the first
  // finds it) once more: then it must read next to nothing.
  for (const state of ['with a backlog', 'at rest'] as const) {
    describe(`retention, ${state}`, () => {
      const day = 86_400_000;
      const rules: [string, (r: PlanRecorder) => Promise<number>][] = [
        ['run events', (r) => pruneRunEvents(r.pool, 7 * day, 1000)],
        ['idempotency keys', (r) => deleteExpiredKeys(r.pool, 1000)],
        ['webhook deliveries', (r) => deleteOldDeliveries(r.pool, 30 * day, 1000)],
        ['attempt contents', (r) => clearOldAttemptContent(r.pool, 7 * day, 1000)],
        ['sessions', (r) => deleteExpiredSessions(r.db, day, 1000)],
        ['oauth grants', (r) => deleteEndedGrants(r.pool, 30 * day, 1000)],
        [
          'unattached uploads',
          (r) => deleteUnattachedUploads(r.asClient, 7 * day, 1000).then((k) => k.length),
        ],
        ['deleted chats', (r) => purgeDeletedChatStep(r.asClient, 30 * day, 1000).then((s) => s.rows)],
      ];
      for (const [name, rule] of rules) {
        it(
          name,
          check(async (r) => {
            if (state === 'at rest') {
              // Drained outside the recorder, inside the test's transaction.
              const plain = new PlanRecorderFree(client);
              while ((await rule(plain as unknown as PlanRecorder)) > 0);
            }
            await rule(r);
          }),
        );
      }
    });
  }
});

/** The hash the generator stores for `label` (md5 hex), as a credential's hash column holds it. */
function generatedHash(label: string): string {
  return generatedId(label).replace(/-/g, '');
}

/** The recorder's interface without the recording: runs the statements as they are. */
class PlanRecorderFree {
  constructor(private readonly client: PoolClient) {}
  get pool(): Pool {
    return this.client as unknown as Pool;
  }
  get asClient(): PoolClient {
    return this.client;
  }
  get db(): Database {
    return { pool: this.pool, bookkeeping: this.pool } as Database;
  }
}
