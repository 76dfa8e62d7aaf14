import { z } from 'zod';
import { parseDuration } from './duration';

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
const optionalDuration = z
  .string()
  .optional()
  .transform((v, ctx) => (v === undefined ? undefined : toMs(v, ctx)));

const port = (fallback: number) => z.coerce.number().int().min(0).max(65535).default(fallback);
const positiveInt = (fallback: number) => z.coerce.number().int().positive().default(fallback);
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
    LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    TRUST_PROXY: bool(false),
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
    /** The worker's `/metrics`, `/healthz` and `/readyz` (0: any free port). */
    WORKER_HTTP_PORT: port(9465),

    DATABASE_URL: z.string().regex(/^postgres(ql)?:\/\//, 'expected a postgresql:// connection URL'),
    DATABASE_POOL_SIZE: positiveInt(10),
    TEMPORAL_ADDRESS: z.string().min(1).default('localhost:7233'),
    TEMPORAL_NAMESPACE: z.string().min(1).default('default'),
    TEMPORAL_TASK_QUEUE: z.string().min(1).default('agent-chat'),

    APP_SECRET: z.string().min(32, 'must be at least 32 characters of random text'),

    ALLOW_SIGN_UP: bool(true),
    ALLOW_INSECURE_WEBHOOKS: bool(false),
    ALLOW_PRIVATE_NETWORK_URLS: bool(false),
    SESSION_TTL: duration('7d'),
    SEND_RATE_LIMIT_PER_MINUTE: positiveInt(60),
    API_RATE_LIMIT_PER_MINUTE: positiveInt(1200),
    SIGN_IN_ATTEMPTS_PER_15_MINUTES: positiveInt(10),
    PLAN_APPROVAL_TIMEOUT: duration('24h'),
    TOOL_ROUTE_TIMEOUT: duration('5m'),
    /**
     * Fault injection for the fault suite only: the send route waits this long between its
     * database commit and the workflow start, so a test can kill the gateway there. Refused in
     * production.
     */
    FAULT_PAUSE_BEFORE_START: optionalDuration,

    STORAGE_DRIVER: z.enum(['local', 's3']).default('local'),
    STORAGE_LOCAL_DIR: z.string().default('.data/files'),
    S3_ENDPOINT: optionalString,
    S3_REGION: z.string().default('us-east-1'),
    S3_BUCKET: optionalString,
    S3_ACCESS_KEY_ID: optionalString,
    S3_SECRET_ACCESS_KEY: optionalString,
    S3_FORCE_PATH_STYLE: bool(false),
    ASSET_PUBLIC_BASE_URL: optionalString,

    MODEL_PROVIDER: z.enum(['none', 'local', 'openai']).default('none'),
    OPENAI_BASE_URL: z.url().default('https://api.openai.com/v1'),
    OPENAI_API_KEY: optionalString,
    OPENAI_MODEL: z.string().default('gpt-4o-mini'),
    MODEL_TIMEOUT: duration('60s'),

    IMAGE_PROVIDER: z.enum(['none', 'local-preview', 'prediction', 'openai']).default('none'),
    PREDICTION_API_URL: optionalString,
    PREDICTION_API_TOKEN: optionalString,
    PREDICTION_MODEL: z.string().default('openai/gpt-image-1'),
    OPENAI_IMAGE_MODEL: z.string().default('gpt-image-1'),
    PROVIDER_POLL_INTERVAL: duration('2s'),

    FFMPEG_PATH: z.string().default('ffmpeg'),
    FFPROBE_PATH: z.string().default('ffprobe'),
    MERGE_MAX_INPUT_SECONDS: positiveInt(600),
    MERGE_MAX_TOTAL_BYTES: positiveInt(200 * 1024 * 1024),
    FETCH_MAX_BYTES: positiveInt(200 * 1024 * 1024),
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
    if (c.MODEL_PROVIDER === 'openai') need('OPENAI_API_KEY', 'MODEL_PROVIDER=openai');
    if (c.IMAGE_PROVIDER === 'prediction') need('PREDICTION_API_URL', 'IMAGE_PROVIDER=prediction');
    if (c.IMAGE_PROVIDER === 'openai') need('OPENAI_API_KEY', 'IMAGE_PROVIDER=openai');
    if (c.NODE_ENV === 'production' && c.FAULT_PAUSE_BEFORE_START !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['FAULT_PAUSE_BEFORE_START'],
        message: 'is a test-only fault injection and may not be set in production',
      });
    }
  });

export type Config = Readonly<z.output<typeof configSchema>>;

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
  return Object.freeze(parsed.data);
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

export function publicBaseUrl(config: Config): string {
  return (config.PUBLIC_BASE_URL ?? `http://localhost:${config.PORT}`).replace(/\/$/, '');
}
