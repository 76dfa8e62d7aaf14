import type {
  LanguageModelV4,
  LanguageModelV4CallOptions,
  LanguageModelV4GenerateResult,
  LanguageModelV4Prompt,
  LanguageModelV4StreamPart,
  LanguageModelV4StreamResult,
} from '@ai-sdk/provider';
import { mediaMarkers } from '../../core/model/prompt';
import type { ModelMessage, ModelReply } from '../../core/model/types';

/** What a test model is asked: the chat as the service sent it, read back into the service's terms. */
export interface TestModelRequest {
  /** The system prompt: the run's instructions, with its chat's summary when it has one. */
  system: string;
  messages: ModelMessage[];
  /** The names of the tools offered. */
  tools: string[];
  /** Streams a piece of the reply's text. */
  onText: (delta: string) => void;
  signal: AbortSignal;
}

/**
 * A test's model as an AI SDK language model (the provider specification v4), so the service
 * calls it as it calls every provider: the test writes `complete`, in its own terms.
 */
export abstract class TestLanguageModel implements LanguageModelV4 {
  readonly specificationVersion = 'v4';
  readonly supportedUrls = { '*/*': [/.*/] };
  readonly modelId: string;
  /** The tokens each call reports, as a provider counts them. */
  usage = { input: 0, output: 0, cached: 0 };

  constructor(readonly provider = 'scripted') {
    this.modelId = provider;
  }

  abstract complete(request: TestModelRequest): Promise<ModelReply>;

  async doGenerate(): Promise<LanguageModelV4GenerateResult> {
    throw new Error('The service streams every call.');
  }

  async doStream(options: LanguageModelV4CallOptions): Promise<LanguageModelV4StreamResult> {
    const signal = options.abortSignal ?? new AbortController().signal;
    const stream = new TransformStream<LanguageModelV4StreamPart, LanguageModelV4StreamPart>();
    const writer = stream.writable.getWriter();
    const write = (part: LanguageModelV4StreamPart) => void writer.write(part).catch(() => undefined);
    write({ type: 'stream-start', warnings: [] });
    write({ type: 'text-start', id: 't' });
    void this.complete({
      system: options.prompt.flatMap((m) => (m.role === 'system' ? [m.content] : [])).join('\n'),
      messages: readPrompt(options.prompt),
      tools: (options.tools ?? []).map((t) => t.name),
      onText: (delta) => write({ type: 'text-delta', id: 't', delta }),
      signal,
    }).then(
      (reply) => {
        write({ type: 'text-end', id: 't' });
        for (const c of reply.toolCalls) {
          write({
            type: 'tool-call',
            toolCallId: c.id,
            toolName: c.toolName,
            input: JSON.stringify(c.input),
          });
        }
        write({
          type: 'finish',
          finishReason: reply.toolCalls.length
            ? { unified: 'tool-calls', raw: undefined }
            : { unified: 'stop', raw: undefined },
          usage: {
            inputTokens: {
              total: this.usage.input,
              noCache: this.usage.input - this.usage.cached,
              cacheRead: this.usage.cached,
              cacheWrite: 0,
            },
            outputTokens: { total: this.usage.output, text: this.usage.output, reasoning: 0 },
          },
        });
        void writer.close().catch(() => undefined);
      },
      (err: unknown) => void writer.abort(err).catch(() => undefined),
    );
    return { stream: stream.readable };
  }
}

/** The prompt in the service's terms (core/model/prompt.ts toSdkMessages, backwards). */
function readPrompt(prompt: LanguageModelV4Prompt): ModelMessage[] {
  return prompt.flatMap((m): ModelMessage[] => {
    switch (m.role) {
      case 'system':
        return [];
      case 'user': {
        const text = m.content.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('\n');
        const markers = mediaMarkers(text);
        return [
          {
            role: 'user',
            text: text.replace(/\n\[(?:image|video|audio): [^\]\s]+\]/g, ''),
            media: [
              ...m.content.flatMap((p) =>
                p.type === 'file' && p.data.type === 'url'
                  ? [{ kind: 'image' as const, url: p.data.url.toString() }]
                  : [],
              ),
              ...markers,
            ],
          },
        ];
      }
      case 'assistant':
        return [
          {
            role: 'assistant',
            text: m.content.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join(''),
            toolCalls: m.content.flatMap((p) =>
              p.type === 'tool-call' ? [{ id: p.toolCallId, toolName: p.toolName, input: p.input }] : [],
            ),
          },
        ];
      case 'tool':
        return m.content.flatMap((p) =>
          p.type === 'tool-result'
            ? [
                {
                  role: 'tool' as const,
                  toolCallId: p.toolCallId,
                  toolName: p.toolName,
                  content: p.output.type === 'text' ? p.output.value : JSON.stringify(p.output),
                },
              ]
            : [],
        );
    }
  });
}

/**
 * A model the test steers: each call takes the next scripted reply; a reply may wait for the test
 * (`gate`) after streaming its first half, and stops when the activity is cancelled.
 */
export class ScriptedModel extends TestLanguageModel {
  readonly calls: TestModelRequest['messages'][] = [];
  /** Calls stopped by their abort signal. */
  aborted = 0;
  private gate: Promise<void> | undefined;
  private open: (() => void) | undefined;
  private holdFrom = 0;
  private holdAt: 'start' | 'half' = 'half';

  constructor(readonly replies: ModelReply[]) {
    super('scripted');
  }

  /** From the call after the next `skip` on, each reply waits after its first half for release(). */
  holdAfterFirstHalf(skip = 0): void {
    this.hold(skip, 'half');
  }

  /** As holdAfterFirstHalf, but each reply waits before it streams anything. */
  holdAtStart(skip = 0): void {
    this.hold(skip, 'start');
  }

  private hold(skip: number, at: 'start' | 'half'): void {
    this.holdFrom = this.calls.length + skip;
    this.holdAt = at;
    this.gate = new Promise((resolve) => (this.open = resolve));
  }

  release(): void {
    this.open?.();
  }

  async complete(request: TestModelRequest): Promise<ModelReply> {
    this.calls.push(structuredClone(request.messages));
    const reply = this.replies.shift() ?? { text: 'done', toolCalls: [] };
    const half = this.holdAt === 'start' ? 0 : Math.ceil(reply.text.length / 2);
    if (half) request.onText(reply.text.slice(0, half));
    if (this.gate && this.calls.length > this.holdFrom) {
      const aborted = new Promise<never>((_, reject) =>
        request.signal.addEventListener(
          'abort',
          () => {
            this.aborted += 1;
            reject(new Error('cancelled'));
          },
          { once: true },
        ),
      );
      await Promise.race([this.gate, aborted]);
    }
    request.onText(reply.text.slice(half));
    return reply;
  }
}

/** A test model of one function. */
export function modelOf(
  provider: string,
  complete: (request: TestModelRequest) => Promise<ModelReply>,
): TestLanguageModel {
  return new (class extends TestLanguageModel {
    complete = complete;
  })(provider);
}
