import OpenAI from 'openai';
import { ApplicationFailure } from '@temporalio/common';
import { FAILURE_TYPES, permanentFailure } from '../errors/failures';
import type { ModelMessage, ModelProvider, ModelReply, ModelRequest, ModelToolCall } from './types';

type ChatMessage = OpenAI.Chat.Completions.ChatCompletionMessageParam;

const SYSTEM_PROMPT =
  'You are an assistant that works with media. Use the tools crop_image, ai_image_2 and merge_videos when the user asks for them; otherwise answer briefly.';

/**
 * Any OpenAI-compatible Chat Completions API (OpenAI, Ollama, vLLM, OpenRouter) with streaming and
 * tool calling. Retries are Temporal's: the client itself does not retry.
 */
export class OpenAIModelProvider implements ModelProvider {
  readonly name = 'openai';
  private readonly client: OpenAI;

  constructor(
    options: { baseURL: string; apiKey: string; timeoutMs: number },
    private readonly model: string,
  ) {
    this.client = new OpenAI({
      baseURL: options.baseURL,
      apiKey: options.apiKey,
      timeout: options.timeoutMs,
      maxRetries: 0,
    });
  }

  async complete(request: ModelRequest): Promise<ModelReply> {
    let stream;
    try {
      stream = await this.client.chat.completions.create(
        {
          model: this.model,
          stream: true,
          messages: [{ role: 'system', content: SYSTEM_PROMPT }, ...request.messages.map(toChatMessage)],
          ...(request.tools.length
            ? {
                tools: request.tools.map((t) => ({
                  type: 'function' as const,
                  function: { name: t.name, description: t.description, parameters: t.parameters },
                })),
              }
            : {}),
        },
        { signal: request.signal },
      );
    } catch (err) {
      throw classify(err);
    }
    let text = '';
    const calls = new Map<number, { id: string; name: string; args: string }>();
    try {
      for await (const chunk of stream) {
        const delta = chunk.choices[0]?.delta;
        if (!delta) continue;
        if (delta.content) {
          text += delta.content;
          request.onText(delta.content);
        }
        for (const tc of delta.tool_calls ?? []) {
          const entry = calls.get(tc.index) ?? { id: '', name: '', args: '' };
          entry.id ||= tc.id ?? '';
          entry.name += tc.function?.name ?? '';
          entry.args += tc.function?.arguments ?? '';
          calls.set(tc.index, entry);
        }
      }
    } catch (err) {
      throw classify(err);
    }
    const toolCalls: ModelToolCall[] = [...calls.values()].map((c) => ({
      id: c.id || `call_${c.name}`,
      toolName: c.name,
      input: parseArguments(c.args),
    }));
    return { text, toolCalls };
  }
}

/** Malformed arguments reach the tool as they are; its schema refuses them with a clear error. */
function parseArguments(args: string): unknown {
  try {
    return args ? JSON.parse(args) : {};
  } catch {
    return { malformed_arguments: args };
  }
}

function toChatMessage(m: ModelMessage): ChatMessage {
  switch (m.role) {
    case 'user':
      if (m.media.length === 0) return { role: 'user', content: m.text };
      return {
        role: 'user',
        content: [
          { type: 'text', text: m.text },
          ...m.media.map((media) =>
            media.kind === 'image'
              ? { type: 'image_url' as const, image_url: { url: media.url } }
              : { type: 'text' as const, text: `[${media.kind}: ${media.url}]` },
          ),
        ],
      };
    case 'assistant':
      return {
        role: 'assistant',
        content: m.text || null,
        ...(m.toolCalls.length
          ? {
              tool_calls: m.toolCalls.map((c) => ({
                id: c.id,
                type: 'function' as const,
                function: { name: c.toolName, arguments: JSON.stringify(c.input) },
              })),
            }
          : {}),
      };
    case 'tool':
      return { role: 'tool', tool_call_id: m.toolCallId, content: m.content };
  }
}

/** 429, 5xx, timeouts and dropped connections are worth retrying; other 4xx are not. */
function classify(err: unknown): Error {
  if (err instanceof OpenAI.APIError && err.status !== undefined) {
    if (err.status === 429 || err.status >= 500) return new Error(`model provider answered ${err.status}`);
    return permanentFailure(
      FAILURE_TYPES.PROVIDER_ERROR,
      `The model provider refused the request (${err.status}).`,
    );
  }
  if (err instanceof ApplicationFailure) return err;
  return err instanceof Error ? err : new Error(String(err));
}
