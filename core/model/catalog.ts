import { createAnthropic } from '@ai-sdk/anthropic';
import { createGoogleGenerativeAI } from '@ai-sdk/google';
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import type { LanguageModelV4 } from '@ai-sdk/provider';
import type { Config } from '../config/config';
import type { ModelEntry } from '../config/models';
import { LocalLanguageModel } from './local';

/** A model the operator offers, with the AI SDK language model that calls it. */
export interface OfferedModel extends ModelEntry {
  language: LanguageModelV4;
}

/** The models a worker can run: the configured list, by name. */
export interface ModelCatalog {
  get(name: string): OfferedModel | undefined;
  readonly defaultModel: string | undefined;
}

/** The AI SDK language model of one configured entry (no call is made until a step asks). */
export function languageModelOf(
  entry: ModelEntry,
  config: Pick<Config, 'LOCAL_MODEL_PACE'>,
): LanguageModelV4 {
  const { apiKey, baseUrl: baseURL, modelId } = entry;
  switch (entry.provider) {
    case 'local':
      return new LocalLanguageModel(modelId, config.LOCAL_MODEL_PACE);
    case 'openai':
      return createOpenAI({ apiKey, baseURL }).responses(modelId);
    case 'anthropic':
      return createAnthropic({ apiKey, baseURL }).messages(modelId);
    case 'google':
      return createGoogleGenerativeAI({ apiKey, baseURL })(modelId);
    case 'openai-compatible':
      return createOpenAICompatible({
        name: 'openaiCompatible',
        baseURL: baseURL ?? '',
        apiKey,
        // Usage comes in the stream's last chunk only when asked for.
        includeUsage: true,
      }).chatModel(modelId);
  }
}

/** The configured models, each with its language model. */
export function createModelCatalog(config: Config): ModelCatalog {
  const byName = new Map<string, OfferedModel>(
    config.models.entries.map((e) => [e.name, { ...e, language: languageModelOf(e, config) }]),
  );
  return { get: (name) => byName.get(name), defaultModel: config.models.defaultModel };
}
