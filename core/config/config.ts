import { isIP, isIPv4 } from 'node:net';
import { z } from 'zod';
import { parseDuration } from './duration';
import { FAULT_POINTS } from './fault-points';
import { MAX_INSTRUCTIONS, MAX_STEPS_LIMIT } from './agent-limits';
import { readModelOffer, type ModelOffer } from './models';

const bool = (fallback: boolean) =>
  z
    .enum(['true', 'false', '1', '0'])
    .default(fallback ? 'true' : 'false')
    .transform((v) => v === 'true' || v === '1');

const toMs = (v: string, ctx: z.RefinementCtx): number => {
  const ms = parseDuration(v);
  if (ms === undefined) {
    ctx.addIssue({ code: 'custom', message: 'expected a duration such as 500ms, 30s, 5m, 24h or 7d' });
    return z.NEVER;
  }
  return ms;
};
const duration = (fallback: string) => z.string().default(fallback).transform(toMs);

const PROXY_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);
const isProxyAddress = (entry: string): boolean => {
  if (PROXY_NAMES.has(entry)) return true;
  const [address = '', prefix, ...rest] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  if (prefix === undefined) return true;
  const bits = Number(prefix);
  return /^\d{1,3}$/.test(prefix) && bits <= (family === 4 ? 32 : 128);
};

/**
 * Whom the gateway believes about `X-Forwarded-For`: `false`/`0` nobody, a hop count (the
 * proxies in front of it), or a comma-separated list of proxy addresses, CIDRs or Express's names
 * (`loopback`, `linklocal`, `uniquelocal`). `true` is refused: it believes any client's header,
 * which lets one client spray its rate-limit and lockout identity over made-up addresses.
 */
const trustProxy = z
  .string()
  .default('false')
  .transform((v, ctx): false | number | string[] => {
    const value = v.trim();
    if (value === '' || value === 'false' || value === '0') return false;
    if (/^\d+$/.test(value)) return Number(value);
    if (value === 'true') {
      ctx.addIssue({
        code: 'custom',
        message:
          "true would believe any client's X-Forwarded-For; give the number of proxies in front (e.g. 1) or their addresses",
      });
      return z.NEVER;
    }
    const entries = value.split(',').map((e) => e.trim());
    if (!entries.every(isProxyAddress)) {
      ctx.addIssue({
        code: 'custom',
        message: 'expected false, a hop count, or a comma-separated list of proxy addresses or CIDRs',
      });
      return z.NEVER;
    }
    return entries;
  });

/**
 * The longest a request waits (MCP_WAIT_MAX) or a stream stays silent (STREAM_HEARTBEAT_INTERVAL):
 * a timer past 2^31 ms fires at once, which would end every wait, or re-read without pause.
 */
const LONGEST_WAIT_MS = 10 * 60 * 1000;

/** The first sign-in lockout (the attempts' window): the shortest SIGN_IN_LOCKOUT_MAX may be. */
export const SIGN_IN_LOCKOUT_MIN_MS = 15 * 60 * 1000;

/**
 * A whole number as the environment spells it. An empty value is refused, not read as 0 (which
 * `Number('')` is): `PORT=` would otherwise mean a random port, `PASSWORD_HASH_QUEUE=` no queue.
 */
const integer = () =>
  z
    .string()
    .trim()
    .regex(/^-?\d+$/, 'expected a whole number')
    .transform(Number)
    .pipe(z.number().int());
const port = (fallback: number) => integer().pipe(z.number().min(0).max(65535)).default(fallback);
const positiveInt = (fallback: number) => integer().pipe(z.number().positive()).default(fallback);
const optionalString = z
  .string()
  .optional()
  .transform((v) => (v === '' ? undefined : v));
const price = (fallback: string) =>
  z
    .string()
    .regex(/^\d+(\.\d{1,4})?$/, 'expected a decimal number of credits such as 1 or 2.5')
    .default(fallback);

export const configSchema = z
  .object({
    NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
    PORT: port(3000),
    HOST: z.string().default('0.0.0.0'),
    PUBLIC_BASE_URL: z.url().optional(),
    /**
     * Browser origins allowed to call /mcp besides PUBLIC_BASE_URL's own (DNS-rebinding defence):
     * comma-separated, e.g. `http://localhost:6274` for the MCP Inspector. A request without an
     * Origin header (a desktop client, a server) is not a browser and is not refused for it.
     */
    MCP_ALLOWED_ORIGINS: z
      .string()
      .default('')
      .transform((v) =>
        v
          .split(',')
          .map((o) => o.trim())
          .filter(Boolean),
      )
      .pipe(z.array(z.url({ protocol: /^https?$/ }))),
    /**
     * How long wait_for_run and resources/subscribe block at most: under an MCP client's request
     * timeout (60 s in the SDKs).
     */
    MCP_WAIT_MAX: duration('55s').refine((ms) => ms <= LONGEST_WAIT_MS, 'must be at most 10m'),
    /**
     * The largest image crop_image and ai_image_2 return inline over MCP (base64 `image` content,
     * a third larger in the answer) besides its link: a model sees it without fetching a URL, and
     * a client's message stays well under the few megabytes assistants accept.
     */
    MCP_INLINE_IMAGE_MAX_BYTES: positiveInt(1024 * 1024),
    /** Lifetimes of the OAuth tokens MCP clients get: short access, rotating refresh. */
    OAUTH_ACCESS_TOKEN_TTL: duration('1h'),
    OAUTH_REFRESH_TOKEN_TTL: duration('30d'),
    /**
     * Client registrations per client address (an IPv6 address by its /64) in an hour, counted in
     * PostgreSQL, so over every gateway together.
     */
    OAUTH_REGISTRATIONS_PER_HOUR: positiveInt(20),
    /**
     * A registered client with no live grant that has not been used (registered, a code or grant
     * of it issued, a grant of it refreshed) for this long is deleted; the assistant registers again.
     */
    OAUTH_CLIENT_IDLE_TTL: duration('30d'),
    LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    TRUST_PROXY: trustProxy,
    HTTP_HEADERS_TIMEOUT: duration('15s'),
    HTTP_REQUEST_TIMEOUT: duration('120s'),
    /**
     * A stopping gateway answers the requests in flight for this long before it cuts them; a
     * stopping worker lets its activities run this long, then cancels them (Temporal retries
     * each at once on a worker that runs).
     */
    SHUTDOWN_GRACE: duration('10s'),

    /** The gateway's operator port: `/metrics` and `/health/details` (0: any free port). */
    METRICS_PORT: port(9464),
    /** When set, the operator endpoints require `Authorization: Bearer <METRICS_TOKEN>`. */
    METRICS_TOKEN: optionalString.pipe(z.string().min(16, 'must be at least 16 characters').optional()),
    /**
     * The address of the operator ports (METRICS_PORT, WORKER_HTTP_PORT). Unset: HOST when
     * METRICS_TOKEN is set, else 127.0.0.1 (see operatorHost). Beyond loopback it needs the token.
     */
    METRICS_HOST: optionalString,
    /** The worker's `/metrics`, `/healthz` and `/readyz` (0: any free port). */
    WORKER_HTTP_PORT: port(9465),
    /**
     * Worker tuning (docs/configuration.md, "The worker's settings", says why each default). Workflow
     * executions kept in the worker's sticky cache, so a turn's next task replays nothing.
     */
    WORKER_MAX_CACHED_WORKFLOWS: integer().pipe(z.number().min(0)).default(1000),
    /**
     * Workflow tasks the worker holds at once; its pollers are at most this many. A task stays held
     * while its local activities run (a model step, a crop, a delivery's first attempt), so this
     * bounds the turns in a model step at once, beside the tasks that only compute.
     */
    WORKER_MAX_CONCURRENT_WORKFLOW_TASKS: integer().pipe(z.number().min(2)).default(200),
    /** Local activities (model steps, crops, first webhook attempts, run endings) run at once. */
    WORKER_MAX_CONCURRENT_LOCAL_ACTIVITIES: positiveInt(100),
    /** Activities (tool calls, webhook retries, model steps a stopping worker handed off) run at once. */
    WORKER_MAX_CONCURRENT_ACTIVITIES: positiveInt(100),
    /** Long polls held open on Temporal for workflow tasks and for activity tasks. */
    WORKER_WORKFLOW_TASK_POLLERS: integer().pipe(z.number().min(2)).default(10),
    WORKER_ACTIVITY_TASK_POLLERS: positiveInt(10),

    DATABASE_URL: z.string().regex(/^postgres(ql)?:\/\//, 'expected a postgresql:// connection URL'),
    DATABASE_POOL_SIZE: positiveInt(10),
    TEMPORAL_ADDRESS: z.string().min(1).default('localhost:7233'),
    TEMPORAL_NAMESPACE: z.string().min(1).default('default'),
    TEMPORAL_TASK_QUEUE: z.string().min(1).default('agent-chat'),

    APP_SECRET: z.string().min(32, 'must be at least 32 characters of random text'),
    /**
     * Earlier APP_SECRETs, comma-separated, while a rotation is under way: they still open webhook
     * secrets sealed under them and still verify file URLs signed with them; only APP_SECRET seals
     * and signs anew.
     */
    APP_SECRET_PREVIOUS: z
      .string()
      .default('')
      .transform((v) =>
        v
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean),
      )
      .pipe(z.array(z.string().min(32, 'each must be at least 32 characters of random text'))),

    ALLOW_SIGN_UP: bool(true),
    ALLOW_INSECURE_WEBHOOKS: bool(false),
    ALLOW_PRIVATE_NETWORK_URLS: bool(false),
    SESSION_TTL: duration('7d'),
    SEND_RATE_LIMIT_PER_MINUTE: positiveInt(60),
    API_RATE_LIMIT_PER_MINUTE: positiveInt(1200),
    /**
     * Failed sign-ins per client address (an IPv6 /64), and per (account, address), in 15 minutes;
     * past it the pair is locked out for 15 minutes, doubling with each lockout up to
     * SIGN_IN_LOCKOUT_MAX.
     */
    SIGN_IN_ATTEMPTS_PER_15_MINUTES: positiveInt(10),
    /** The longest a doubled lockout lasts; shorter than the first lockout (15m) it would undo the limit. */
    SIGN_IN_LOCKOUT_MAX: duration('24h').refine((ms) => ms >= SIGN_IN_LOCKOUT_MIN_MS, {
      message: 'must be at least 15m, the first lockout',
    }),
    /**
     * Failed sign-ins to one account in an hour from addresses it has not signed in from in the
     * last 30 days, whatever those addresses; past it they are refused (docs/security.md).
     */
    SIGN_IN_FAILURES_PER_ACCOUNT_PER_HOUR: positiveInt(50),
    /** Sign-up attempts (taken emails included) per client address (an IPv6 /64) in an hour. */
    SIGN_UP_RATE_LIMIT_PER_HOUR: positiveInt(10),
    /** Sign-up attempts per IPv6 /48 in an hour: a site's many /64s share it. */
    SIGN_UP_RATE_LIMIT_PER_NETWORK_PER_HOUR: positiveInt(30),
    /** Sign-up attempts over all clients in an hour: bounds a spread-out enumeration. */
    SIGN_UP_RATE_LIMIT_OVERALL_PER_HOUR: positiveInt(1000),
    /** Argon2 hashes run at once per gateway (19 MiB each) ... */
    PASSWORD_HASH_CONCURRENCY: positiveInt(4),
    /** ... and how many more may wait; past that sign-up and sign-in answer 503 with Retry-After. */
    PASSWORD_HASH_QUEUE: integer().pipe(z.number().min(0)).default(32),
    /** Redeliveries a user may ask for in an hour, over all their webhook deliveries. */
    WEBHOOK_REDELIVERIES_PER_HOUR: positiveInt(30),
    PLAN_APPROVAL_TIMEOUT: duration('24h'),
    /** Live (unrevoked) API keys one user may hold; past it, 422 LIMIT_REACHED. */
    MAX_API_KEYS_PER_USER: positiveInt(20),
    /** Live OAuth grants (assistants connected by sign-in) one user may hold; past it, a new one is refused. */
    MAX_OAUTH_GRANTS_PER_USER: positiveInt(20),
    /** Webhook endpoints (not deleted) one user may hold; past it, 422 LIMIT_REACHED. */
    MAX_WEBHOOK_ENDPOINTS_PER_USER: positiveInt(10),
    /**
     * Runs not yet terminal (QUEUED, RUNNING, WAITING) over all of a user's chats: what one user
     * can hold of the worker. A send past it answers 429 ACTIVE_LIMIT. A turn waiting in a chat's
     * queue is not counted: it runs nothing until it takes its chat's ended run's place.
     */
    MAX_ACTIVE_RUNS_PER_USER: positiveInt(10),
    /** Turns one chat may hold queued behind its run (onActiveRun "enqueue"); past it, 409 QUEUE_FULL. */
    MAX_QUEUED_TURNS_PER_CHAT: positiveInt(10),
    /**
     * Tool calls running at once for one user (direct calls and runs' calls together). A direct
     * call past it answers 429 ACTIVE_LIMIT; a run's call waits (retried) for a slot.
     */
    MAX_ACTIVE_TOOL_CALLS_PER_USER: positiveInt(4),
    /**
     * A new account's starting credit balance (decimal). None by default: free credits given to
     * anyone who signs up can be farmed with throwaway accounts (docs/security.md, "Sign-up
     * grant"). `npm start` sets 100, so the quick start's tool calls are paid for.
     */
    CREDIT_GRANT_ON_SIGN_UP: price('0'),
    /**
     * Bytes one user may keep in storage, uploads and tool outputs together; past it an upload or a
     * tool's output is refused (422 LIMIT_REACHED) and nothing is stored.
     */
    MAX_STORED_BYTES_PER_USER: positiveInt(1024 * 1024 * 1024),
    /**
     * Live run streams, wait_for_run and resources/subscribe one user may hold open at once, over
     * every gateway; past it, 429 ACTIVE_LIMIT.
     */
    MAX_OPEN_STREAMS_PER_USER: positiveInt(20),
    /**
     * Live run streams, wait_for_run and resources/subscribe one gateway holds open at once, over
     * every user; past it, 503 SERVICE_UNAVAILABLE (another gateway may take it). Unset: what the
     * process's open-file limit allows (core/process/open-files.ts).
     */
    MAX_OPEN_STREAMS_PER_GATEWAY: optionalString.pipe(integer().pipe(z.number().positive()).optional()),
    // How often an idle live stream gets a `: ping` comment (proxies close silent connections).
    STREAM_HEARTBEAT_INTERVAL: duration('15s').refine((ms) => ms <= LONGEST_WAIT_MS, 'must be at most 10m'),
    /**
     * How long a finished run keeps its live-stream events; the reconciler deletes them after. A
     * resume (Last-Event-ID) after that gets the run's snapshot instead. At least a minute, so a
     * client that drops at the run's end can still resume.
     */
    RUN_EVENTS_RETENTION: duration('7d').refine((ms) => ms >= 60_000, 'must be at least 1m'),
    /**
     * The retention pass (operations/retention.ts, in each reconciler pass) deletes what has had
     * its time, oldest first, in statements of RETENTION_BATCH_SIZE rows. Webhook deliveries that
     * settled (delivered or failed for good), with their attempts, after this long since recorded;
     * a pending one stays.
     */
    WEBHOOK_DELIVERIES_RETENTION: duration('30d').refine((ms) => ms >= 86_400_000, 'must be at least 1d'),
    /** An attempt's signed content and request headers (for a receiver's signature check) are cleared after this. */
    WEBHOOK_ATTEMPT_CONTENT_RETENTION: duration('7d'),
    /** How long an expired console session's row is kept before it is deleted. */
    EXPIRED_SESSIONS_RETENTION: duration('1d'),
    /** How long a revoked OAuth grant, or one whose refresh token expired, is kept before it is deleted. */
    ENDED_OAUTH_GRANTS_RETENTION: duration('30d'),
    /** An upload no message took within this is deleted, its file with it. */
    UNATTACHED_UPLOADS_RETENTION: duration('7d').refine((ms) => ms >= 3_600_000, 'must be at least 1h'),
    /**
     * A deleted chat (gone from every route at once) keeps its rows and files for this grace
     * period, then is purged whole: messages, runs, their events, tool calls and charges, files.
     */
    DELETED_CHATS_RETENTION: duration('30d').refine((ms) => ms >= 3_600_000, 'must be at least 1h'),
    /** Rows one retention statement deletes at most: its locks and its time stay small. */
    RETENTION_BATCH_SIZE: integer().pipe(z.number().min(10).max(100_000)).default(1000),
    TOOL_ROUTE_TIMEOUT: duration('5m'),
    /** How long a request waits for the first request with its Idempotency-Key before 409. */
    IDEMPOTENCY_WAIT: duration('5s'),
    /**
     * Whether a send's answer waits a moment for its workflow's start, so as to carry
     * `triggerRunId`: `paced` waits while this gateway's recent starts came in time
     * (operations/runs/start-pace.ts); `off` answers as soon as the turn is durable, with
     * `triggerRunId: null` (the run's snapshot names the execution once it has started).
     */
    SEND_START_WAIT: z.enum(['paced', 'off']).default('paced'),
    /**
     * Fault injection for the fault and chaos suites only (core/process/fault.ts): at each named
     * point (comma-separated, from FAULT_POINTS) the process prints a marker line and holds that
     * work for FAULT_PAUSE_FOR, so a suite that sees the line can kill the process exactly there.
     * Refused in production.
     */
    FAULT_PAUSE_AT: z
      .string()
      .default('')
      .transform((v) =>
        v
          .split(',')
          .map((p) => p.trim())
          .filter(Boolean),
      )
      .pipe(z.array(z.enum(FAULT_POINTS))),
    FAULT_PAUSE_FOR: duration('10m'),

    STORAGE_DRIVER: z.enum(['local', 's3']).default('local'),
    STORAGE_LOCAL_DIR: z.string().default('.data/files'),
    S3_ENDPOINT: optionalString,
    S3_REGION: z.string().default('us-east-1'),
    S3_BUCKET: optionalString,
    S3_ACCESS_KEY_ID: optionalString,
    S3_SECRET_ACCESS_KEY: optionalString,
    S3_FORCE_PATH_STYLE: bool(false),
    ASSET_PUBLIC_BASE_URL: optionalString,
    /**
     * How long a gateway file URL (`/files/{key}?exp=…&sig=…`) works. Reads of a message, run or
     * tool result answer freshly signed URLs, so this bounds how long a leaked URL is good for.
     */
    FILE_URL_TTL: duration('7d'),

    /** The models offered, as a JSON array (docs/models.md), or a file holding it; see readModelOffer. */
    MODELS: optionalString,
    MODELS_FILE: optionalString,
    /** The model of a run whose send and chat name none; the list's first when unset. */
    MODEL_DEFAULT: optionalString,
    /** Shorthand for a one-model list when MODELS and MODELS_FILE are unset. */
    MODEL_PROVIDER: z.enum(['none', 'local', 'openai']).default('none'),
    OPENAI_BASE_URL: z.url().default('https://api.openai.com/v1'),
    OPENAI_API_KEY: optionalString,
    OPENAI_MODEL: z.string().default('gpt-4o-mini'),
    /** How long a model call may go without a streamed piece before it is cut (and retried). */
    MODEL_TIMEOUT: duration('60s'),
    /** The most model steps a run may take; a send's or a chat's `maxSteps` is 1 up to this. */
    AGENT_MAX_STEPS: integer().pipe(z.number().int().min(1).max(MAX_STEPS_LIMIT)).default(8),
    /** The instructions (system prompt) of a run whose send and chat give none. */
    AGENT_INSTRUCTIONS: z
      .string()
      .max(MAX_INSTRUCTIONS)
      .default(
        'You are an assistant that works with media. Use the tools crop_image, ai_image_2 and merge_videos when the user asks for them; otherwise answer briefly.',
      ),
    /**
     * The local model's pause between the pieces it streams (default: none): a real model's pace,
     * for a demo, and the chaos suite's slow model.
     */
    LOCAL_MODEL_PACE: z
      .string()
      .optional()
      .transform((v, ctx) => (v === undefined || v === '' ? 0 : toMs(v, ctx))),

    IMAGE_PROVIDER: z.enum(['none', 'local-preview', 'prediction', 'openai']).default('none'),
    PREDICTION_API_URL: optionalString,
    PREDICTION_API_TOKEN: optionalString,
    PREDICTION_MODEL: z.string().default('openai/gpt-image-1'),
    OPENAI_IMAGE_MODEL: z.string().default('gpt-image-1'),
    PROVIDER_POLL_INTERVAL: duration('2s'),

    FFMPEG_PATH: z.string().default('ffmpeg'),
    FFPROBE_PATH: z.string().default('ffprobe'),
    /** ffmpeg's wall-clock limit for one merge (ffprobe has 30 s); within the tool's 6 minutes. */
    FFMPEG_TIMEOUT: duration('5m'),
    /** The address space ffmpeg and ffprobe may map (ulimit -v), in bytes. */
    FFMPEG_MAX_MEMORY_BYTES: positiveInt(4 * 1024 * 1024 * 1024),
    MERGE_MAX_INPUT_SECONDS: positiveInt(600),
    MERGE_MAX_TOTAL_BYTES: positiveInt(200 * 1024 * 1024),
    /** The largest video merge_videos writes: ffmpeg stops there (-fs), and the call is refused. */
    MERGE_MAX_OUTPUT_BYTES: positiveInt(512 * 1024 * 1024),
    FETCH_MAX_BYTES: positiveInt(200 * 1024 * 1024),
    /**
     * An input image (crop_image, ai_image_2 edits) is read into memory: at most this many bytes
     * are streamed in, then the download is cut. 20 MB, as an upload.
     */
    IMAGE_FETCH_MAX_BYTES: positiveInt(20 * 1024 * 1024),
    /** The longest side (displayed, in pixels) of a video merge_videos takes, read by ffprobe before decoding. */
    MERGE_MAX_INPUT_SIDE: positiveInt(4096),
    FETCH_TIMEOUT: duration('30s'),
    OUTBOUND_CA_FILE: optionalString,

    PRICE_CROP_IMAGE: price('1'),
    PRICE_AI_IMAGE_2: price('10'),
    PRICE_MERGE_VIDEOS: price('5'),
  })
  .superRefine((c, ctx) => {
    const need = (key: keyof typeof c, when: string) => {
      if (!c[key]) ctx.addIssue({ code: 'custom', path: [key], message: `is required when ${when}` });
    };
    if (c.STORAGE_DRIVER === 's3') {
      need('S3_BUCKET', 'STORAGE_DRIVER=s3');
      need('S3_ACCESS_KEY_ID', 'STORAGE_DRIVER=s3');
      need('S3_SECRET_ACCESS_KEY', 'STORAGE_DRIVER=s3');
    }
    if (c.IMAGE_PROVIDER === 'prediction') need('PREDICTION_API_URL', 'IMAGE_PROVIDER=prediction');
    if (c.IMAGE_PROVIDER === 'openai') need('OPENAI_API_KEY', 'IMAGE_PROVIDER=openai');
    // The switches that open the service to its own network are for development and tests; a
    // production deployment that carries one over refuses to start rather than run exposed.
    for (const unsafe of ['ALLOW_INSECURE_WEBHOOKS', 'ALLOW_PRIVATE_NETWORK_URLS'] as const) {
      if (c.NODE_ENV === 'production' && c[unsafe]) {
        ctx.addIssue({
          code: 'custom',
          path: [unsafe],
          message: 'is for development and tests only and may not be true when NODE_ENV=production',
        });
      }
    }
    // Metrics name routes, tools and queues, and /health/details the workers: open to any network
    // only behind a token.
    if (c.METRICS_HOST !== undefined && !isLoopbackHost(c.METRICS_HOST) && !c.METRICS_TOKEN) {
      ctx.addIssue({
        code: 'custom',
        path: ['METRICS_HOST'],
        message: 'beyond loopback needs METRICS_TOKEN: set it, or leave METRICS_HOST unset (127.0.0.1)',
      });
    }
    if (c.NODE_ENV === 'production' && c.FAULT_PAUSE_AT.length > 0) {
      ctx.addIssue({
        code: 'custom',
        path: ['FAULT_PAUSE_AT'],
        message: 'is a test-only fault injection and may not be set in production',
      });
    }
  });

export type Config = Readonly<
  z.output<typeof configSchema> & {
    /** The models offered (MODELS, MODELS_FILE or the MODEL_PROVIDER shorthand), checked at start. */
    models: ModelOffer;
  }
>;

export class ConfigError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** Validates the environment once; every problem names its variable, and no value is echoed. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = configSchema.safeParse(env);
  if (!parsed.success) {
    throw new ConfigError(
      parsed.error.issues.map((issue) => `${issue.path.join('.') || '(environment)'}: ${issue.message}`),
    );
  }
  const models = readModelOffer({ ...parsed.data, modelProviderSet: Boolean(env.MODEL_PROVIDER) }, env);
  if (Array.isArray(models)) throw new ConfigError(models);
  return Object.freeze({ ...parsed.data, models });
}

/** For a process's main.ts: a bad value stops the process at start, naming the variable. */
export function loadConfigOrExit(env: NodeJS.ProcessEnv = process.env): Config {
  try {
    return loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(78);
    }
    throw err;
  }
}

/** APP_SECRET first (it seals and signs), then APP_SECRET_PREVIOUS (they only open and verify). */
export function appSecrets(config: Pick<Config, 'APP_SECRET' | 'APP_SECRET_PREVIOUS'>): string[] {
  return [config.APP_SECRET, ...config.APP_SECRET_PREVIOUS];
}

/** Whether a listening address is this host's loopback only. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '');
  return bare === 'localhost' || bare === '::1' || (isIPv4(bare) && bare.startsWith('127.'));
}

/**
 * Where the operator ports listen: METRICS_HOST when set; else HOST when METRICS_TOKEN guards
 * them; else loopback, so that a HOST of every interface (its default) never opens metrics and
 * the workers' details to the network without a token.
 */
export function operatorHost(config: Pick<Config, 'HOST' | 'METRICS_HOST' | 'METRICS_TOKEN'>): string {
  return config.METRICS_HOST ?? (config.METRICS_TOKEN ? config.HOST : '127.0.0.1');
}

export function publicBaseUrl(config: Config): string {
  return (config.PUBLIC_BASE_URL ?? `http://localhost:${config.PORT}`).replace(/\/$/, '');
}
