/**
 * A database as an operator a year in would have it (issue 50): users, chats, runs, messages,
 * their stream events, tool calls and charges, plan waitpoints, attachments, webhook deliveries
 * with their attempts, idempotency keys, sessions and OAuth grants. Written by set-based SQL
 * (`INSERT … SELECT` over generate_series) into a database the project's migrator has migrated, so
 * every row passes the real constraints, foreign keys and indexes; in time order, as a service
 * writes them, so the tables' physical order (which the planner weighs) is a real one's.
 *
 * Every id is derived from a label (`md5('chat:0')` and so on) and every choice from a hash of
 * the row's number, so a scale always gives the same database, and the bench finds its heavy user
 * and its long chat without asking. At scale 1: 10,000 users, 200,000 chats (50,000 of them one
 * user's), 1.6 million runs, 3.1 million messages (one chat of 10,000). See
 * docs/deployment.md, "Data growth and retention", for the sizes and times measured.
 *
 * What is not written: the bytes of files (attachment rows name keys no storage holds), real
 * password hashes, API keys and webhook secrets (the bench adds a key of its own to the users it
 * drives), and runs still active: every generated run has ended, as a stack at rest has them.
 */
import { createHash } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Client } from 'pg';
import { migrate } from '../core/db/migrator';

/**
 * The uuid the generator gives `label`: its md5, with the version and variant digits a uuid must
 * have (the API refuses any other), as `uuidOf` computes it in SQL.
 */
export function generatedId(label: string): string {
  const hex = createHash('md5').update(label).digest('hex');
  const version = '12345678'['09abcdef'.indexOf(hex[12] as string)] ?? hex[12];
  const variant = '89ab'['0123456789abcdef'.indexOf(hex[16] as string) % 4];
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${version}${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20)}`;
}

/** generatedId in SQL, of the text expression `label`. */
const uuidOf = (label: string) => {
  const m = `md5(${label})`;
  return `(substr(${m}, 1, 12) || translate(substr(${m}, 13, 1), '09abcdef', '12345678') || substr(${m}, 14, 3)
           || translate(substr(${m}, 17, 1), '0123456789abcdef', '89ab89ab89ab89ab') || substr(${m}, 18))::uuid`;
};

/** The user with the most chats (a quarter of them), and the chat of 10,000 messages (at scale 1), theirs. */
export const HEAVY_USER_ID = generatedId('user:0');
export const LONG_CHAT_ID = generatedId('chat:0');
/** A user of an ordinary size: about 15 chats at any scale. */
export const ORDINARY_USER_ID = generatedId('user:1');

/** Four-letter words (consonant, vowel, consonant, vowel), all distinct: titles are three of them. */
const CONSONANTS = 'bdfgklmnprst';
const VOWELS = 'aeiou';
export const WORDS = Array.from(
  { length: 300 },
  (_, i) =>
    `${CONSONANTS[i % 12]}${VOWELS[Math.floor(i / 12) % 5]}${CONSONANTS[Math.floor(i / 60)]}${VOWELS[(i * 7) % 5]}`,
);
/** A word in about 1 % of titles (each title has three of 300), for the search rows. */
export const COMMON_TITLE_WORD = WORDS[137] as string;

export interface Sizes {
  /** Accounts; the first `chatUsers` of them (the heavy user first) hold the chats. */
  users: number;
  chatUsers: number;
  chats: number;
  /** Chats of the heavy user (the long chat among them). */
  heavyChats: number;
  /** Runs of the long chat: it holds twice as many messages. */
  longChatRuns: number;
  /** Users (the heavy user first) with a webhook endpoint each. */
  endpointUsers: number;
  /** Console sessions, a third of them live; the rest expired, some long ago. */
  sessions: number;
  directToolCalls: number;
  unattachedUploads: number;
  idempotencyKeys: number;
  oauthClients: number;
  oauthGrants: number;
}

export function sizesAt(scale: number): Sizes {
  if (!(scale > 0) || scale > 10) throw new Error(`the scale must be above 0 and at most 10, not ${scale}`);
  // The tables that stay small whatever the scale keep thousands of rows at any: the plan test's
  // planner must not find one small enough that reading it whole is the cheaper plan.
  const at = (n: number, min: number) => Math.max(min, Math.round(n * scale));
  return {
    users: at(10_000, 10_000),
    chatUsers: at(10_000, 20),
    chats: at(200_000, 200),
    heavyChats: at(50_000, 50),
    longChatRuns: at(5_000, 50),
    endpointUsers: at(500, 2),
    sessions: at(30_000, 10_000),
    directToolCalls: at(20_000, 2_000),
    unattachedUploads: at(5_000, 2_000),
    idempotencyKeys: at(10_000, 10_000),
    oauthClients: at(50, 10),
    oauthGrants: at(2_000, 2_000),
  };
}

export interface GenerateStep {
  step: string;
  rows: number;
  seconds: number;
}

export interface TableSize {
  table: string;
  rows: number;
  /** Table, TOAST and indexes. */
  bytes: number;
  indexBytes: number;
}

export interface Generated {
  scale: number;
  sizes: Sizes;
  seconds: number;
  steps: GenerateStep[];
  tables: TableSize[];
  databaseBytes: number;
}

/**
 * A hash of the SQL expression `x` (any integer) into [0, m): independent choices of one row hash
 * different expressions of its number. `hashint8` may answer -2^31, whose abs() overflows.
 */
const h = (x: string, m: number) => `((hashint8((${x})::int8)::int8 & 2147483647) % ${m})`;
const pick = (list: readonly string[], x: string) =>
  `(ARRAY[${list.map((w) => `'${w}'`).join(',')}])[1 + ${h(x, list.length)}]`;

/** Texts a user and the model write, from the same words: a run picks one of each by its hash. */
function texts(count: number, words: number, seed: number): string[] {
  let state = seed;
  const next = () => {
    state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
    return state;
  };
  return Array.from({ length: count }, () =>
    Array.from({ length: words }, () => WORDS[next() % WORDS.length]).join(' '),
  );
}
const USER_TEXTS = texts(64, 12, 7);
const REPLIES = texts(64, 60, 11);

/**
 * Fills an empty, migrated database (migrating it first when it is not) at `scale` (1: the issue's
 * sizes). Refuses a database that holds any user: it writes a year of data, not beside real data.
 */
export async function generateDatabase(
  databaseUrl: string,
  scale: number,
  log: (line: string) => void = () => undefined,
): Promise<Generated> {
  const sizes = sizesAt(scale);
  const started = performance.now();
  await migrate(databaseUrl);
  const db = new Client({ connectionString: databaseUrl });
  await db.connect();
  const steps: GenerateStep[] = [];
  try {
    const { rows } = await db.query<{ any: boolean }>('SELECT EXISTS (SELECT 1 FROM "User") AS any');
    if (rows[0]?.any)
      throw new Error('the database already holds users: the generator fills an empty one only');
    // Nothing here needs to survive a crash before the end; the temp tables are large.
    await db.query(`SET synchronous_commit = off`);
    await db.query(`SET temp_buffers = '512MB'`);
    await db.query(`SET work_mem = '256MB'`);
    await db.query(`SET maintenance_work_mem = '1GB'`);
    const now = (await db.query<{ now: Date }>('SELECT now() AS now')).rows[0]?.now as Date;
    const step = async (name: string, sql: string | string[]) => {
      const t = performance.now();
      let count = 0;
      for (const one of Array.isArray(sql) ? sql : [sql])
        count += (await db.query(one, one.includes('$1') ? [now] : [])).rowCount ?? 0;
      const seconds = (performance.now() - t) / 1000;
      steps.push({ step: name, rows: count, seconds });
      log(`${name}: ${count.toLocaleString('en')} rows in ${seconds.toFixed(1)} s`);
    };
    // Loaded without the keys, indexes and foreign keys, then each rebuilt in one pass (a sort, a
    // join) as the migrations define it: every row is checked by every constraint all the same, at
    // a fraction of the cost of checking them one row at a time; the schema is compared after.
    const schema = await schemaObjects(db);
    await step('keys, indexes and foreign keys set aside', dropStatements(schema));
    for (const [name, sql] of plan(sizes)) await step(name, sql);
    await step('primary keys and indexes rebuilt', [
      ...schema.filter((o) => o.kind === 'p').map(addConstraint),
      ...schema.filter((o) => o.kind === 'i').map((o) => o.def),
    ]);
    await step('foreign keys checked and added', schema.filter((o) => o.kind === 'f').map(addConstraint));
    const rebuilt = await schemaObjects(db);
    if (JSON.stringify(rebuilt) !== JSON.stringify(schema))
      throw new Error('the rebuilt keys, indexes and foreign keys differ from the migrated ones');
    // As autovacuum leaves a table at rest: its statistics gathered, its pages all-visible.
    await step('vacuum and analyze', 'VACUUM (ANALYZE)');
    const total = (performance.now() - started) / 1000;
    const tables = await tableSizes(db);
    const databaseBytes = Number(
      (await db.query<{ bytes: string }>('SELECT pg_database_size(current_database()) AS bytes')).rows[0]
        ?.bytes,
    );
    return { scale, sizes, seconds: total, steps, tables, databaseBytes };
  } finally {
    await db.end();
  }
}

/** A primary key, foreign key or other index of the schema, as the catalog defines it. */
interface SchemaObject {
  kind: 'p' | 'f' | 'i';
  table: string;
  name: string;
  def: string;
}

async function schemaObjects(db: Client): Promise<SchemaObject[]> {
  const { rows } = await db.query<SchemaObject>(
    `SELECT con.contype::text AS kind, t.relname AS table, con.conname AS name, pg_get_constraintdef(con.oid) AS def
       FROM pg_constraint con
       JOIN pg_class t ON t.oid = con.conrelid
       JOIN pg_namespace n ON n.oid = t.relnamespace AND n.nspname = 'public'
      WHERE con.contype IN ('p', 'f') AND t.relname <> '_prisma_migrations'
     UNION ALL
     SELECT 'i', t.relname, i.relname, pg_get_indexdef(i.oid)
       FROM pg_index x
       JOIN pg_class i ON i.oid = x.indexrelid
       JOIN pg_class t ON t.oid = x.indrelid
       JOIN pg_namespace n ON n.oid = t.relnamespace AND n.nspname = 'public'
      WHERE t.relname <> '_prisma_migrations'
        AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = x.indexrelid AND c.contype = 'p')
      ORDER BY 1, 2, 3`,
  );
  return rows;
}

/** Foreign keys first (they need the keys they point at), then primary keys, then the other indexes. */
function dropStatements(schema: SchemaObject[]): string[] {
  const order = { f: 0, p: 1, i: 2 };
  return [...schema]
    .sort((a, b) => order[a.kind] - order[b.kind])
    .map((o) =>
      o.kind === 'i' ? `DROP INDEX "${o.name}"` : `ALTER TABLE "${o.table}" DROP CONSTRAINT "${o.name}"`,
    );
}

const addConstraint = (o: SchemaObject) => `ALTER TABLE "${o.table}" ADD CONSTRAINT "${o.name}" ${o.def}`;

async function tableSizes(db: Client): Promise<TableSize[]> {
  const { rows } = await db.query<{ table: string; rows: string; bytes: string; indexBytes: string }>(
    `SELECT c.relname AS table, c.reltuples::bigint AS rows, pg_total_relation_size(c.oid) AS bytes,
            pg_indexes_size(c.oid) AS "indexBytes"
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = 'public'
      WHERE c.relkind = 'r' AND c.relname <> '_prisma_migrations'
      ORDER BY pg_total_relation_size(c.oid) DESC`,
  );
  return rows.map((r) => ({
    table: r.table,
    rows: Math.max(0, Number(r.rows)),
    bytes: Number(r.bytes),
    indexBytes: Number(r.indexBytes),
  }));
}

/**
 * The statements, in the order the foreign keys need. `$1` is the generation's "now". The plan of
 * each chat and run is computed once into temp tables (g_chat, g_run), which every later step
 * reads; the big tables are written in slices of time, oldest first.
 */
function plan(s: Sizes): [string, string | string[]][] {
  const U = s.users;
  const H = s.heavyChats;
  const CU = s.chatUsers;
  const id = (label: string, x: string) => uuidOf(`'${label}:' || (${x})`);
  const userOf = (c: string) => `CASE WHEN ${c} < ${H} THEN 0 ELSE 1 + (${c} - ${H}) % ${CU - 1} END`;
  // A run's number: its chat's times 2^20 plus its place in the chat.
  const runKey = `(c::int8 * 1048576 + k)`;
  const sliceCount = Math.max(1, Math.ceil((s.chats * 8) / 200_000));
  const slices = (sql: (from: string, to: string) => string) =>
    Array.from({ length: sliceCount }, (_, i) =>
      sql(
        `$1::timestamptz - interval '400 days' + interval '400 days' * ${i} / ${sliceCount}`,
        `$1::timestamptz - interval '400 days' + interval '400 days' * ${i + 1} / ${sliceCount}`,
      ),
    );
  const assets = (tool: string, user: string) =>
    `jsonb_build_array(jsonb_build_object('url', '/files/tools/' || ${user} || '/' || ${tool} || '/photo-crop.png',
       'mimeType', 'image/png', 'filename', 'photo-crop.png'))`;
  const toolResult = (tool: string, user: string) =>
    `jsonb_build_object('toolName', 'crop_image',
       'output', jsonb_build_object('url', '/files/tools/' || ${user} || '/' || ${tool} || '/photo-crop.png',
                                    'provider', 'sharp', 'width', 800, 'height', 600),
       'assets', ${assets(tool, user)}, 'creditCost', '1', 'durationMs', 840, 'providerRunId', 'sharp-' || ${tool})`;
  const cropInput = (attachment: string) =>
    `jsonb_build_object('attachmentId', ${attachment}, 'x_percent', 25, 'y_percent', 10, 'width_percent', 50, 'height_percent', 80)`;

  return [
    [
      'users',
      `INSERT INTO "User" (id, email, "passwordHash", "createdAt", "updatedAt", "creditBalance")
       SELECT ${id('user', 'u')}, 'user-' || u || '@bench.test', 'generated-no-password',
              $1::timestamptz - interval '400 days', $1::timestamptz - interval '400 days', 1000
         FROM generate_series(0, ${U - 1}) u`,
    ],
    [
      'api keys',
      `INSERT INTO "ApiKey" (id, "userId", name, prefix, "keyHash", "lastUsedAt", "revokedAt", "createdAt")
       SELECT ${id('apikey', 'u')}, ${id('user', 'u')}, 'generated', 'svck_gen_' || u, md5('keyhash:' || u),
              $1::timestamptz - interval '1 day', CASE WHEN u % 10 = 9 THEN $1::timestamptz - interval '30 days' END,
              $1::timestamptz - interval '390 days'
         FROM generate_series(0, ${U - 1}) u`,
    ],
    [
      // A third live, the rest expired, some of them long ago; spread over the users.
      'sessions',
      `INSERT INTO "Session" (id, "userId", "tokenHash", "expiresAt", "createdAt")
       SELECT ${id('session', 'i')}, ${id('user', `i % ${U}`)}, md5('sessionhash:' || i),
              CASE WHEN i % 3 = 0 THEN $1::timestamptz + interval '6 days'
                   ELSE $1::timestamptz - interval '1 day' * (1 + ${h('i', 300)}) END,
              CASE WHEN i % 3 = 0 THEN $1::timestamptz - interval '1 day'
                   ELSE $1::timestamptz - interval '1 day' * (8 + ${h('i', 300)}) END
         FROM generate_series(0, ${s.sessions - 1}) i`,
    ],
    [
      'oauth clients',
      `INSERT INTO "OAuthClient" (id, metadata, "createdAt")
       SELECT 'gen-client-' || i, jsonb_build_object('client_name', 'Generated client ' || i,
                'redirect_uris', jsonb_build_array('http://127.0.0.1:6274/callback')),
              $1::timestamptz - interval '200 days'
         FROM generate_series(0, ${s.oauthClients - 1}) i`,
    ],
    [
      // A third live, a third revoked, a third whose refresh token expired.
      'oauth grants',
      `INSERT INTO "OAuthGrant" (id, "userId", "clientId", "clientName", "accessTokenHash", "accessExpiresAt",
                                 "refreshTokenHash", "refreshExpiresAt", scopes, "accessScopes", "lastUsedAt",
                                 "revokedAt", "createdAt")
       SELECT ${id('grant', 'g')}, ${id('user', `g % ${U}`)}, 'gen-client-' || (g % ${s.oauthClients}),
              'Generated client ' || (g % ${s.oauthClients}), md5('access:' || g),
              $1::timestamptz - interval '1 hour' * (g % 3), md5('refresh:' || g),
              CASE WHEN g % 3 = 2 THEN $1::timestamptz - interval '1 day' * (1 + ${h('g', 120)})
                   ELSE $1::timestamptz + interval '20 days' END,
              ARRAY['read', 'write'], ARRAY['read', 'write'], $1::timestamptz - interval '2 days',
              CASE WHEN g % 3 = 1 THEN $1::timestamptz - interval '1 day' * (1 + ${h('g', 120)}) END,
              $1::timestamptz - interval '1 day' * (40 + ${h('g', 120)})
         FROM generate_series(0, ${s.oauthGrants - 1}) g`,
    ],
    [
      // Each chat's plan: its user, its runs (1 to 15; the long chat's many), when they happened
      // (one session of turns a few minutes apart, anywhere in the last year; the long chat's over
      // the whole year), its title (three of WORDS), and whether it is a favourite (3 % of chats;
      // 0.2 % of the heavy user's, who keeps a hundred of fifty thousand) or deleted (2 %).
      'plan of the chats',
      `CREATE TEMP TABLE g_chat AS
       SELECT c, ${id('chat', 'c')} AS id, ${id('user', userOf('c'))} AS user_id,
              n, gap, $1::timestamptz - interval '1 hour' - gap * n - interval '360 days' * ${h('c * 64 + 2', 1_000_000)} / 1000000.0 * (c > 0)::int AS start,
              ${pick(WORDS, 'c * 64 + 4')} || ' ' || ${pick(WORDS, 'c * 64 + 5')} || ' ' || ${pick(WORDS, 'c * 64 + 6')} AS title,
              c > 0 AND ${h('c * 64 + 7', 1000)} < CASE WHEN c < ${H} THEN 2 ELSE 30 END AS favorite,
              c > 0 AND ${h('c * 64 + 8', 100)} < 2 AS deleted,
              ${h('c * 64 + 9', 90)} AS deleted_after_days
         FROM generate_series(0, ${s.chats - 1}) c
        CROSS JOIN LATERAL (SELECT CASE WHEN c = 0 THEN ${s.longChatRuns} ELSE 1 + ${h('c * 64 + 1', 15)} END AS n) runs
        CROSS JOIN LATERAL (SELECT CASE WHEN c = 0 THEN interval '364 days' / ${s.longChatRuns}
                                        ELSE interval '3 minutes' + interval '1 second' * ${h('c * 64 + 3', 600)} END AS gap) spacing`,
    ],
    [
      // Each run's plan. 96 % complete (the long chat's all), 3 % failed, 1 % cancelled; one in ten
      // ran a crop, one in five of those in plan mode; one in twenty came with an uploaded image.
      // Runs that ended in the last 8 days keep their stream events (RUN_EVENTS_RETENTION is 7).
      'plan of the runs',
      [
        `CREATE TEMP TABLE g_run AS
         SELECT c, k, id, chat_id, user_id, user_n, status, tool, plan_mode, upload, via, created,
                created + interval '15 milliseconds' AS started,
                created + interval '1 millisecond' * (800 + ${h(`${runKey} * 16 + 6`, 4000)})
                        + interval '1 second' * tool::int + interval '20 seconds' * plan_mode::int AS finished
           FROM (
             SELECT ch.c, k, ${id('run', runKey)} AS id, ch.id AS chat_id, ch.user_id, ${userOf('ch.c')} AS user_n,
                    CASE WHEN ch.c = 0 OR ${h(`${runKey} * 16 + 1`, 100)} < 96 THEN 'COMPLETE'
                         WHEN ${h(`${runKey} * 16 + 1`, 100)} < 99 THEN 'FAILED' ELSE 'CANCELLED' END AS status,
                    ${h(`${runKey} * 16 + 2`, 10)} = 0 AS tool,
                    ${h(`${runKey} * 16 + 2`, 10)} = 0 AND ${h(`${runKey} * 16 + 3`, 5)} = 0 AS plan_mode,
                    ${h(`${runKey} * 16 + 4`, 20)} = 0 AS upload,
                    CASE ${h(`${runKey} * 16 + 5`, 10)} WHEN 0 THEN 'mcp' WHEN 1 THEN 'console' ELSE 'rest' END AS via,
                    ch.start + ch.gap * k AS created
               FROM g_chat ch, generate_series(0, ch.n - 1) k
           ) r`,
        `CREATE INDEX ON g_run (created)`,
        `CREATE INDEX ON g_run (chat_id, k)`,
        `ANALYZE g_run`,
        `ANALYZE g_chat`,
      ],
    ],
    [
      'chats',
      `INSERT INTO "Chat" (id, "userId", title, "isFavorite", "lastMessageAt", "lastMessageId", "activityAt",
                           "deletedAt", "createdAt", "updatedAt")
       SELECT ch.id, ch.user_id, ch.title, ch.favorite, last.at, last.message_id, last.at,
              CASE WHEN ch.deleted THEN least($1::timestamptz - interval '1 minute',
                                              last.at + interval '1 day' * ch.deleted_after_days) END,
              ch.start, last.at
         FROM g_chat ch
         CROSS JOIN LATERAL (
           SELECT CASE WHEN r.status = 'COMPLETE' THEN r.finished ELSE r.created END AS at,
                  CASE WHEN r.status = 'COMPLETE' THEN ${id('amsg', `r.c::int8 * 1048576 + r.k`)}
                       ELSE ${id('umsg', `r.c::int8 * 1048576 + r.k`)} END AS message_id
             FROM g_run r WHERE r.chat_id = ch.id AND r.k = ch.n - 1) last
        ORDER BY ch.start`,
    ],
    [
      'runs',
      slices(
        (from, to) =>
          `INSERT INTO "Run" (id, "chatId", "userId", "messageId", "assistantMessageId", status, "planMode", via,
                              "triggerRunId", "traceId", text, "currentStep", error, "cancelRequestedAt",
                              "createdAt", "startedAt", "finishedAt", "updatedAt")
           SELECT id, chat_id, user_id, ${id('umsg', runKey)}, ${id('amsg', runKey)}, status::"RunStatus", plan_mode, via,
                  ${id('exec', runKey)}::text, md5('trace:' || ${runKey}),
                  CASE WHEN status = 'COMPLETE' THEN ${pick(REPLIES, `${runKey} * 16 + 7`)}
                       ELSE left(${pick(REPLIES, `${runKey} * 16 + 7`)}, 40) END,
                  1 + tool::int,
                  CASE status WHEN 'FAILED' THEN 'The model provider failed.' WHEN 'CANCELLED' THEN 'The run was cancelled.' END,
                  CASE WHEN status = 'CANCELLED' THEN finished - interval '100 milliseconds' END,
                  created, started, finished, finished
             FROM g_run WHERE created >= ${from} AND created < ${to} ORDER BY created`,
      ),
    ],
    [
      // The user's message at the run's start, the model's at its end (complete runs only).
      'messages',
      slices(
        (from, to) =>
          `INSERT INTO "Message" (id, "chatId", role, "runId", "contentBlocks", "createdAt")
           SELECT id, chat_id, role::"MessageRole", run_id, blocks, at FROM (
             SELECT ${id('umsg', runKey)} AS id, chat_id, 'user' AS role, id AS run_id, created AS at,
                    jsonb_build_array(jsonb_build_object('type', 'text', 'text', ${pick(USER_TEXTS, `${runKey} * 16 + 8`)}))
                    || CASE WHEN upload THEN jsonb_build_array(jsonb_build_object('type', 'image',
                         'attachmentId', ${id('upload', runKey)}, 'url', '/files/attachments/' || user_id || '/' || ${id('uploadkey', runKey)}))
                       ELSE '[]'::jsonb END AS blocks
               FROM g_run WHERE created >= ${from} AND created < ${to}
             UNION ALL
             SELECT ${id('amsg', runKey)}, chat_id, 'assistant', id, finished,
                    CASE WHEN tool THEN jsonb_build_array(
                           jsonb_build_object('type', 'tool_use', 'toolCallId', ${id('tool', runKey)}, 'toolName', 'crop_image',
                                              'input', ${cropInput(id('upload', runKey))}),
                           jsonb_build_object('type', 'tool_result', 'toolCallId', ${id('tool', runKey)}, 'toolName', 'crop_image',
                                              'result', ${toolResult(id('tool', runKey), 'user_id')}))
                         ELSE '[]'::jsonb END
                    || jsonb_build_array(jsonb_build_object('type', 'text', 'text', ${pick(REPLIES, `${runKey} * 16 + 7`)}))
                    || CASE WHEN tool THEN jsonb_build_array(jsonb_build_object('type', 'image',
                         'attachmentId', ${id('toolimage', runKey)}, 'url', '/files/tools/' || user_id || '/' || ${id('tool', runKey)} || '/photo-crop.png'))
                       ELSE '[]'::jsonb END
               FROM g_run WHERE created >= ${from} AND created < ${to} AND status = 'COMPLETE'
           ) m ORDER BY at`,
      ),
    ],
    [
      // Every run's event counter: what its stream numbered, pruned or not.
      'run event counters',
      `INSERT INTO "RunEventSeq" ("runId", seq)
       SELECT id, 3 + 2 * tool::int + 4 * plan_mode::int FROM g_run ORDER BY created`,
    ],
    [
      // The insert triggers would announce every call and waitpoint as a stream event now, a year
      // late; the events are written below, as they were at the time (the ALTERs roll back with a
      // failure, so no trigger stays off).
      'tool calls, charges and waitpoints',
      [
        'BEGIN',
        `ALTER TABLE "ToolCall" DISABLE TRIGGER "ToolCall_started"`,
        `ALTER TABLE "Waitpoint" DISABLE TRIGGER "Waitpoint_opened"`,
        `INSERT INTO "ToolCall" (id, "userId", "chatId", "runId", "toolName", via, status, input, result, error,
                                 "providerRunId", "creditCost", "creditReserved", "durationMs", "startedAt", "finishedAt")
         SELECT ${id('tool', runKey)}, user_id, chat_id, id, 'crop_image', via,
                CASE WHEN status = 'COMPLETE' THEN 'SUCCEEDED' ELSE 'FAILED' END::"ToolCallStatus",
                ${cropInput(id('upload', runKey))},
                CASE WHEN status = 'COMPLETE' THEN ${toolResult(id('tool', runKey), 'user_id')} END,
                CASE WHEN status <> 'COMPLETE' THEN 'The run ended before the tool finished.' END,
                CASE WHEN status = 'COMPLETE' THEN 'sharp-' || ${id('tool', runKey)} END,
                CASE WHEN status = 'COMPLETE' THEN 1 END, 1, 840,
                finished - interval '1500 milliseconds', finished - interval '660 milliseconds'
           FROM g_run WHERE tool ORDER BY created`,
        // Direct calls (the tools route, MCP), of no chat.
        `INSERT INTO "ToolCall" (id, "userId", "toolName", via, status, input, result, "providerRunId", "creditCost",
                                 "creditReserved", "durationMs", "startedAt", "finishedAt")
         SELECT ${id('directtool', 'i')}, ${id('user', `i % ${CU}`)}, 'crop_image', 'rest', 'SUCCEEDED', ${cropInput(id('directupload', 'i'))},
                ${toolResult(id('directtool', 'i'), id('user', `i % ${CU}`))}, 'sharp-' || i, 1, 1, 840, at, at + interval '840 milliseconds'
           FROM generate_series(0, ${s.directToolCalls - 1}) i
          CROSS JOIN LATERAL (SELECT $1::timestamptz - interval '365 days' * ${h('i', 1_000_000)} / 1000000.0 AS at) t
          ORDER BY at`,
        `INSERT INTO "CreditLedgerEntry" (id, "userId", "toolCallId", amount, reason, "createdAt")
         SELECT ${uuidOf(`'ledger:' || t.id`)}, t."userId", t.id, 1, 'tool:crop_image', t."finishedAt"
           FROM "ToolCall" t WHERE t.status = 'SUCCEEDED' ORDER BY t."finishedAt"`,
        `INSERT INTO "Waitpoint" (id, "runId", type, status, plan, "expiresAt", "createdAt", "resolvedAt",
                                  "decidedByUserId", "decidedVia", "decidedAt")
         SELECT ${id('waitpoint', runKey)}, id, 'PLAN_APPROVAL', 'APPROVED',
                jsonb_build_object('summary', 'Crop the photo.', 'steps', jsonb_build_array(jsonb_build_object(
                  'toolName', 'crop_image', 'input', ${cropInput(id('upload', runKey))}, 'reason', 'As asked.'))),
                started + interval '24 hours', started + interval '300 milliseconds',
                started + interval '20 seconds', user_id, via, started + interval '20 seconds'
           FROM g_run WHERE plan_mode ORDER BY created`,
        `ALTER TABLE "ToolCall" ENABLE TRIGGER "ToolCall_started"`,
        `ALTER TABLE "Waitpoint" ENABLE TRIGGER "Waitpoint_opened"`,
        'COMMIT',
      ],
    ],
    [
      // The stream events of the runs that ended in the last 8 days, numbered as RunEventSeq says:
      // RUNNING; a plan's wait (opened, WAITING, resolved, RUNNING); a tool's start and finish;
      // the text; the ending. A day's worth is past RUN_EVENTS_RETENTION: the next prune's work.
      'run events',
      `INSERT INTO "RunEvent" ("runId", seq, type, data, "createdAt")
       SELECT r.id, e.seq, e.type, e.data, e.at
         FROM g_run r
        CROSS JOIN LATERAL (
          SELECT row_number() OVER (ORDER BY e.at, e.o) AS seq, e.type, e.data, e.at FROM (VALUES
            (1, 'status', jsonb_build_object('status', 'RUNNING'), r.started, true),
            (2, 'waitpoint.opened', jsonb_build_object('id', ${id('waitpoint', `r.c::int8 * 1048576 + r.k`)}, 'status', 'PENDING'),
                r.started + interval '300 milliseconds', r.plan_mode),
            (3, 'status', jsonb_build_object('status', 'WAITING'), r.started + interval '300 milliseconds', r.plan_mode),
            (4, 'waitpoint.resolved', jsonb_build_object('id', ${id('waitpoint', `r.c::int8 * 1048576 + r.k`)}, 'status', 'APPROVED'),
                r.started + interval '20 seconds', r.plan_mode),
            (5, 'status', jsonb_build_object('status', 'RUNNING'), r.started + interval '20 seconds', r.plan_mode),
            (6, 'tool.started', jsonb_build_object('id', ${id('tool', `r.c::int8 * 1048576 + r.k`)}, 'toolName', 'crop_image', 'status', 'RUNNING'),
                r.finished - interval '1500 milliseconds', r.tool),
            (7, 'tool.finished', jsonb_build_object('id', ${id('tool', `r.c::int8 * 1048576 + r.k`)}, 'toolName', 'crop_image',
                  'status', CASE WHEN r.status = 'COMPLETE' THEN 'SUCCEEDED' ELSE 'FAILED' END),
                r.finished - interval '660 milliseconds', r.tool),
            (8, 'text.delta', jsonb_build_object('text', left(${pick(REPLIES, `(r.c::int8 * 1048576 + r.k) * 16 + 7`)}, 40)),
                r.finished - interval '100 milliseconds', true),
            (9, 'status', jsonb_strip_nulls(jsonb_build_object('status', r.status,
                  'error', CASE r.status WHEN 'FAILED' THEN 'The model provider failed.' WHEN 'CANCELLED' THEN 'The run was cancelled.' END)),
                r.finished, true)
          ) e(o, type, data, at, kept) WHERE e.kept) e
        WHERE r.finished >= $1::timestamptz - interval '8 days'
        ORDER BY e.at`,
    ],
    [
      // An image uploaded with one run in twenty; the crops' images on the model's messages;
      // uploads never sent with a turn, half of them older than UNATTACHED_UPLOADS_RETENTION.
      'attachments',
      [
        `INSERT INTO "Attachment" (id, "userId", "chatId", "messageId", "storageKey", filename, "mimeType", "sizeBytes", "createdAt")
         SELECT ${id('upload', runKey)}, user_id, chat_id, ${id('umsg', runKey)},
                'attachments/' || user_id || '/' || ${id('uploadkey', runKey)}, 'photo.jpg', 'image/jpeg',
                200000 + ${h(`${runKey} * 16 + 9`, 800000)}, created
           FROM g_run WHERE upload ORDER BY created`,
        `INSERT INTO "Attachment" (id, "userId", "chatId", "messageId", "storageKey", filename, "mimeType", "sizeBytes", "createdAt")
         SELECT ${id('toolimage', runKey)}, user_id, chat_id, ${id('amsg', runKey)},
                'tools/' || user_id || '/' || ${id('tool', runKey)} || '/photo-crop.png', 'photo-crop.png', 'image/png',
                100000 + ${h(`${runKey} * 16 + 10`, 400000)}, finished
           FROM g_run WHERE tool AND status = 'COMPLETE' ORDER BY finished`,
        `INSERT INTO "Attachment" (id, "userId", "storageKey", filename, "mimeType", "sizeBytes", "createdAt")
         SELECT ${id('unattached', 'i')}, ${id('user', `i % ${CU}`)}, 'attachments/' || ${id('user', `i % ${CU}`)} || '/' || ${id('unattachedkey', 'i')},
                'photo.jpg', 'image/jpeg', 300000, $1::timestamptz - interval '14 days' * ${h('i', 1_000_000)} / 1000000.0
           FROM generate_series(0, ${s.unattachedUploads - 1}) i ORDER BY 7`,
      ],
    ],
    [
      // The heavy user's endpoint is paused (its secret is not a real one, and the bench's turns
      // must not deliver); the others are live. All take the run endings and tool results.
      'webhook endpoints',
      `INSERT INTO "WebhookEndpoint" (id, "userId", url, events, "secretEncrypted", "isActive", "createdAt")
       SELECT ${id('endpoint', 'u')}, ${id('user', 'u')}, 'https://hooks.example.com/generated/' || u,
              ARRAY['agent.completed', 'agent.failed', 'tool.completed'], 'generated-not-a-sealed-secret', u > 0,
              $1::timestamptz - interval '380 days'
         FROM generate_series(0, ${s.endpointUsers - 1}) u`,
    ],
    [
      // Each ending and each tool result of those users' runs: delivered at the first attempt,
      // or (one in thirty) at the second after a 500, or (one in a hundred) failed for good.
      'webhook deliveries',
      slices(
        (from, to) =>
          `INSERT INTO "WebhookDelivery" (id, "endpointId", event, "idempotencyKey", "envelopeId", payload, status,
                                          "createdAt", "updatedAt", "deliveredAt")
           SELECT ${uuidOf(`'delivery:' || d.key || ':' || d.event`)}, d.endpoint, d.event, d.key,
                  'wh:' || d.endpoint || ':' || d.event || ':' || d.key,
                  jsonb_build_object('id', 'wh:' || d.endpoint || ':' || d.event || ':' || d.key, 'event', d.event,
                    'createdAt', to_char(d.at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 'data', d.data),
                  d.status::"WebhookDeliveryStatus", d.at, d.at + interval '400 milliseconds',
                  CASE WHEN d.status = 'DELIVERED' THEN d.at + interval '400 milliseconds' END
             FROM (
               SELECT ${id('endpoint', 'r.user_n')} AS endpoint, r.id::text AS key,
                      CASE WHEN r.status = 'COMPLETE' THEN 'agent.completed' ELSE 'agent.failed' END AS event,
                      jsonb_build_object('chatId', r.chat_id, 'runId', r.id, 'messageId', ${id('umsg', 'r.c::int8 * 1048576 + r.k')},
                        'traceId', md5('trace:' || (r.c::int8 * 1048576 + r.k)), 'status', r.status,
                        'assistantMessageId', ${id('amsg', 'r.c::int8 * 1048576 + r.k')}) AS data,
                      CASE WHEN ${h('(r.c::int8 * 1048576 + r.k) * 16 + 11', 100)} = 0 THEN 'FAILED' ELSE 'DELIVERED' END AS status,
                      r.finished AS at
                 FROM g_run r WHERE r.user_n < ${s.endpointUsers} AND r.created >= ${from} AND r.created < ${to}
               UNION ALL
               SELECT ${id('endpoint', 'r.user_n')}, ${id('tool', 'r.c::int8 * 1048576 + r.k')}::text, 'tool.completed',
                      ${toolResult(id('tool', 'r.c::int8 * 1048576 + r.k'), 'r.user_id')}
                        || jsonb_build_object('toolCallId', ${id('tool', 'r.c::int8 * 1048576 + r.k')}, 'chatId', r.chat_id, 'runId', r.id),
                      'DELIVERED', r.finished - interval '660 milliseconds'
                 FROM g_run r WHERE r.user_n < ${s.endpointUsers} AND r.tool AND r.status = 'COMPLETE'
                  AND r.created >= ${from} AND r.created < ${to}
             ) d ORDER BY d.at`,
      ),
    ],
    [
      'webhook attempts',
      `INSERT INTO "WebhookAttempt" (id, "deliveryId", series, attempt, "startedAt", "durationMs", "statusCode", error,
                                     "responseBody", "signedContent", "requestHeaders")
       SELECT ${uuidOf(`'attempt:' || d.id || ':' || a`)}, d.id, 1, a, d."createdAt" + interval '5 seconds' * (a - 1),
              120 + ${h(`('x' || left(md5(d.id::text), 7))::bit(28)::int + a`, 300)},
              CASE WHEN a = n THEN (CASE WHEN d.status = 'DELIVERED' THEN 200 ELSE 500 END) ELSE 500 END,
              CASE WHEN a = n AND d.status = 'DELIVERED' THEN NULL ELSE 'The endpoint answered 500.' END,
              CASE WHEN a = n AND d.status = 'DELIVERED' THEN 'ok' ELSE 'Internal Server Error' END,
              extract(epoch FROM d."createdAt")::bigint || '.' || d.payload::text,
              jsonb_build_object('content-type', 'application/json', 'user-agent', 'agent-chat-webhooks/1',
                'webhook-id', d."envelopeId", 'webhook-timestamp', extract(epoch FROM d."createdAt")::bigint::text,
                'webhook-signature', 'v1,' || encode(sha256(convert_to(d.id::text, 'UTF8')), 'base64'))
         FROM "WebhookDelivery" d
        CROSS JOIN LATERAL (SELECT CASE WHEN d.status = 'FAILED' THEN 5
                                        WHEN ${h(`('x' || left(md5(d.id::text), 7))::bit(28)::int`, 30)} = 0 THEN 2 ELSE 1 END AS n) n
        CROSS JOIN LATERAL generate_series(1, n.n) a
        ORDER BY d."createdAt", a`,
    ],
    [
      // Keys sent over the last two days: half are past their 24 hours.
      'idempotency keys',
      `INSERT INTO "IdempotencyKey" ("userId", key, operation, fingerprint, owner, outcome, "lockedUntil", "createdAt")
       SELECT ${id('user', `i % ${CU}`)}, ${id('idemkey', 'i')}::text, 'sendMessage', md5('fingerprint:' || i),
              ${id('owner', 'i')}, jsonb_build_object('ok', true, 'value', jsonb_build_object('status', 'queued')),
              at + interval '30 seconds', at
         FROM generate_series(0, ${s.idempotencyKeys - 1}) i
        CROSS JOIN LATERAL (SELECT $1::timestamptz - interval '48 hours' * ${h('i', 1_000_000)} / 1000000.0 AS at) t
        ORDER BY at`,
    ],
    ['temp tables dropped', ['DROP TABLE g_run', 'DROP TABLE g_chat']],
  ];
}
