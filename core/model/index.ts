import type { Config } from '../config/config';
import { LocalModelProvider } from './local';
import { OpenAIModelProvider } from './openai';
import type { ModelProvider } from './types';

/** The configured model provider; undefined when none is, and runs then fail with a clear error. */
export function createModelProvider(config: Config): ModelProvider | undefined {
  switch (config.MODEL_PROVIDER) {
    case 'local':
      return new LocalModelProvider(config.LOCAL_MODEL_PACE);
    case 'openai':
      return new OpenAIModelProvider(
        {
          baseURL: config.OPENAI_BASE_URL,
          apiKey: config.OPENAI_API_KEY ?? '',
          timeoutMs: config.MODEL_TIMEOUT,
        },
        config.OPENAI_MODEL,
      );
    case 'none':
      return undefined;
  }
}
