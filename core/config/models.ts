import { readFileSync } from 'node:fs';
import { z } from 'zod';

/** The providers an operator may offer models of (docs/models.md). */
export const MODEL_PROVIDERS = ['local', 'openai', 'anthropic', 'google', 'openai-compatible'] as const;
export type ModelProviderName = (typeof MODEL_PROVIDERS)[number];

/** Where each provider's key is read from unless an entry names another variable (`apiKeyEnv`). */
const DEFAULT_KEY_ENV: Partial<Record<ModelProviderName, string>> = {
  openai: 'OPENAI_API_KEY',
  anthropic: 'ANTHROPIC_API_KEY',
  google: 'GOOGLE_GENERATIVE_AI_API_KEY',
};

/** The local model's window when its entry names none: it only needs one for compaction. */
const LOCAL_CONTEXT_WINDOW = 32_768;
const DEFAULT_MAX_OUTPUT_TOKENS = 4_096;

/** Credits per million tokens: a decimal of at most 6 places, given as a number or a string. */
const creditsPerMillion = z
  .union([z.number(), z.string()])
  .transform((v) => (typeof v === 'number' ? String(v) : v.trim()))
  .pipe(
    z
      .string()
      .regex(
        /^\d{1,9}(\.\d{1,6})?$/,
        'expected credits per million tokens, a decimal such as 3 or 0.15 (at most 6 places)',
      ),
  );

const entrySchema = z
  .object({
    /** What a send and a chat name it by (`model`). */
    name: z
      .string()
      .regex(
        /^[A-Za-z0-9][A-Za-z0-9._:/-]{0,63}$/,
        'expected 1-64 letters, digits or . _ : / - (starting with a letter or digit)',
      ),
    provider: z.enum(MODEL_PROVIDERS),
    /** The provider's own id of the model; the name when left out. */
    modelId: z.string().min(1).max(200).optional(),
    /** The provider's API base URL: required for openai-compatible, optional (a proxy) for the others. */
    baseUrl: z.url({ protocol: /^https?$/ }).optional(),
    /** The environment variable holding the key, instead of the provider's usual one. */
    apiKeyEnv: z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'expected the name of an environment variable')
      .optional(),
    /** Tokens the model takes in one call, its reply included: the context is built to fit it. */
    contextWindow: z.number().int().min(1_024).max(100_000_000).optional(),
    /** The longest reply asked for; with the window, what the context leaves room for. */
    maxOutputTokens: z.number().int().min(16).max(1_000_000).optional(),
    price: z
      .object({
        input: creditsPerMillion,
        output: creditsPerMillion,
        cachedInput: creditsPerMillion.optional(),
      })
      .strict()
      .optional(),
  })
  .strict();

/** One model an operator offers, as the worker builds it and the gateway checks names against. */
export interface ModelEntry {
  name: string;
  provider: ModelProviderName;
  modelId: string;
  baseUrl: string | undefined;
  /** The provider's key, read from the environment at start (never logged, never shown). */
  apiKey: string | undefined;
  contextWindow: number;
  maxOutputTokens: number;
  /** Credits per million tokens; cached input at the input price unless given. */
  price: { input: string; output: string; cachedInput: string };
}

export interface ModelOffer {
  entries: readonly ModelEntry[];
  /** The model a run uses when neither its send nor its chat names one; undefined when none is offered. */
  defaultModel: string | undefined;
}

/** What the list is read from: the environment's MODELS, MODELS_FILE and the shorthand's variables. */
export interface ModelOfferSource {
  MODELS?: string;
  MODELS_FILE?: string;
  MODEL_DEFAULT?: string;
  MODEL_PROVIDER: 'none' | 'local' | 'openai';
  /** Whether MODEL_PROVIDER was set in the environment (not its default). */
  modelProviderSet: boolean;
  OPENAI_BASE_URL: string;
  OPENAI_MODEL: string;
}

/**
 * The models an operator offers: `MODELS` (a JSON array) or `MODELS_FILE` (a file holding one), or,
 * with neither, today's shorthand `MODEL_PROVIDER=local|openai|none` as a list of one or none.
 * Each problem is reported naming its entry; the keys are read from `env` and never echoed.
 */
export function readModelOffer(source: ModelOfferSource, env: NodeJS.ProcessEnv): ModelOffer | string[] {
  const problems: string[] = [];
  let raw: unknown;
  let where = 'MODELS';
  if (source.MODELS !== undefined && source.MODELS_FILE !== undefined) {
    return ['MODELS_FILE: give MODELS or MODELS_FILE, not both'];
  }
  if (source.MODELS !== undefined || source.MODELS_FILE !== undefined) {
    if (source.modelProviderSet) {
      return [
        'MODEL_PROVIDER: is a shorthand for a one-model list; leave it out when MODELS or MODELS_FILE is set',
      ];
    }
    let text = source.MODELS;
    if (source.MODELS_FILE !== undefined) {
      where = 'MODELS_FILE';
      try {
        text = readFileSync(source.MODELS_FILE, 'utf8');
      } catch (err) {
        return [`MODELS_FILE: cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`];
      }
    }
    try {
      raw = JSON.parse(text ?? '');
    } catch {
      return [`${where}: is not valid JSON (expected an array of models, see docs/models.md)`];
    }
  } else {
    raw = shorthand(source);
  }
  if (!Array.isArray(raw)) return [`${where}: expected a JSON array of models`];

  const entries: ModelEntry[] = [];
  const names = new Set<string>();
  raw.forEach((item: unknown, index) => {
    const named =
      item && typeof item === 'object' && typeof (item as { name?: unknown }).name === 'string'
        ? ` ("${(item as { name: string }).name.slice(0, 64)}")`
        : '';
    const at = `${where}[${index}]${named}`;
    const parsed = entrySchema.safeParse(item);
    if (!parsed.success) {
      for (const issue of parsed.error.issues) {
        problems.push(`${at}${issue.path.length ? `.${issue.path.join('.')}` : ''}: ${issue.message}`);
      }
      return;
    }
    const e = parsed.data;
    const local = e.provider === 'local';
    if (names.has(e.name)) problems.push(`${at}.name: another model has this name`);
    names.add(e.name);
    if (e.provider === 'openai-compatible' && !e.baseUrl) {
      problems.push(`${at}.baseUrl: is required for an openai-compatible server`);
    }
    if (!local && e.contextWindow === undefined) {
      problems.push(`${at}.contextWindow: is required (the model's window in tokens)`);
    }
    const contextWindow = e.contextWindow ?? LOCAL_CONTEXT_WINDOW;
    const maxOutputTokens = e.maxOutputTokens ?? Math.min(DEFAULT_MAX_OUTPUT_TOKENS, contextWindow / 4);
    if (maxOutputTokens > contextWindow / 2) {
      problems.push(`${at}.maxOutputTokens: must be at most half of contextWindow (${contextWindow})`);
    }
    const keyEnv = e.apiKeyEnv ?? DEFAULT_KEY_ENV[e.provider];
    const apiKey = keyEnv ? env[keyEnv] || undefined : undefined;
    if (keyEnv && !apiKey && (e.apiKeyEnv !== undefined || !local)) {
      problems.push(`${at}: ${keyEnv} is not set (the ${e.provider} API key)`);
    }
    entries.push({
      name: e.name,
      provider: e.provider,
      modelId: e.modelId ?? e.name,
      baseUrl: e.baseUrl,
      apiKey: local ? undefined : apiKey,
      contextWindow,
      maxOutputTokens: Math.floor(maxOutputTokens),
      price: {
        input: e.price?.input ?? '0',
        output: e.price?.output ?? '0',
        cachedInput: e.price?.cachedInput ?? e.price?.input ?? '0',
      },
    });
  });
  const defaultModel = source.MODEL_DEFAULT ?? entries[0]?.name;
  if (source.MODEL_DEFAULT !== undefined && !names.has(source.MODEL_DEFAULT)) {
    problems.push(`MODEL_DEFAULT: names no model of ${where} ("${source.MODEL_DEFAULT.slice(0, 64)}")`);
  }
  if (problems.length) return problems;
  return { entries, defaultModel };
}

/**
 * MODEL_PROVIDER as a list: `local` the embedded model; `openai` today's meaning, any
 * OpenAI-compatible Chat Completions server at OPENAI_BASE_URL (OpenAI itself, Ollama, vLLM…).
 */
function shorthand(source: ModelOfferSource): unknown[] {
  switch (source.MODEL_PROVIDER) {
    case 'none':
      return [];
    case 'local':
      return [{ name: 'local', provider: 'local' }];
    case 'openai':
      return [
        {
          name: source.OPENAI_MODEL,
          provider: 'openai-compatible',
          baseUrl: source.OPENAI_BASE_URL,
          apiKeyEnv: 'OPENAI_API_KEY',
          contextWindow: 128_000,
        },
      ];
  }
}
