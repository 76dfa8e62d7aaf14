import type {
  LanguageModelV4,
  LanguageModelV4CallOptions,
  LanguageModelV4Content,
  LanguageModelV4GenerateResult,
  LanguageModelV4Prompt,
  LanguageModelV4StreamPart,
  LanguageModelV4StreamResult,
  LanguageModelV4Usage,
} from '@ai-sdk/provider';
import { estimateTokens } from './tokens';
import { mediaMarkers, SUMMARY_PROVIDER_OPTION } from './prompt';
import type { ModelMedia, ModelReply, ModelToolCall } from './types';

/** Pieces of text the local model streams, as a real model streams tokens. */
const PIECE = /.{1,16}/gs;

/**
 * A deterministic, rule-based agent for the embedded default and the tests, as an AI SDK language
 * model (the provider specification `@ai-sdk/provider` v4): it goes through the same path as every
 * provider. It understands plain requests for the three tools and otherwise answers in text; after
 * a tool has run it reports the result; asked for a summary (compaction) it lists the user's
 * requests. It counts its usage with the service's estimate, so credits work on it too.
 */
export class LocalLanguageModel implements LanguageModelV4 {
  readonly specificationVersion = 'v4';
  readonly provider = 'local';
  /** Nothing is ever downloaded for it: it reads URLs as text. */
  readonly supportedUrls = { '*/*': [/.*/] };

  /** @param paceMs the pause between streamed pieces (LOCAL_MODEL_PACE) */
  constructor(
    readonly modelId = 'local',
    private readonly paceMs = 0,
  ) {}

  async doGenerate(options: LanguageModelV4CallOptions): Promise<LanguageModelV4GenerateResult> {
    const reply = answer(options);
    const content: LanguageModelV4Content[] = [];
    if (reply.text) content.push({ type: 'text', text: reply.text });
    for (const c of reply.toolCalls) {
      content.push({
        type: 'tool-call',
        toolCallId: c.id,
        toolName: c.toolName,
        input: JSON.stringify(c.input),
      });
    }
    return {
      content,
      finishReason: finishReason(reply),
      usage: usageOf(options.prompt, reply),
      warnings: [],
    };
  }

  async doStream(options: LanguageModelV4CallOptions): Promise<LanguageModelV4StreamResult> {
    const reply = answer(options);
    const signal = options.abortSignal;
    const pace = this.paceMs;
    const pieces = reply.text.match(PIECE) ?? [];
    let next = 0;
    const stream = new ReadableStream<LanguageModelV4StreamPart>({
      start(controller) {
        controller.enqueue({ type: 'stream-start', warnings: [] });
        if (pieces.length) controller.enqueue({ type: 'text-start', id: 'text' });
      },
      async pull(controller) {
        if (signal?.aborted) {
          controller.error(signal.reason ?? new Error('The model call was cancelled.'));
          return;
        }
        const piece = pieces[next++];
        if (piece !== undefined) {
          controller.enqueue({ type: 'text-delta', id: 'text', delta: piece });
          await new Promise((resolve) => (pace > 0 ? setTimeout(resolve, pace) : setImmediate(resolve)));
          return;
        }
        if (pieces.length) controller.enqueue({ type: 'text-end', id: 'text' });
        for (const c of reply.toolCalls) {
          controller.enqueue({
            type: 'tool-call',
            toolCallId: c.id,
            toolName: c.toolName,
            input: JSON.stringify(c.input),
          });
        }
        controller.enqueue({
          type: 'finish',
          finishReason: finishReason(reply),
          usage: usageOf(options.prompt, reply),
        });
        controller.close();
      },
    });
    return { stream };
  }
}

function answer(options: LanguageModelV4CallOptions): ModelReply {
  if (options.providerOptions?.local?.[SUMMARY_PROVIDER_OPTION] === true) {
    return text(summarise(options.prompt, options.maxOutputTokens));
  }
  const reply = decide(readPrompt(options.prompt));
  // A model calls only the tools it is offered (a run's `tools` setting).
  const offered = new Set((options.tools ?? []).map((t) => t.name));
  const missing = reply.toolCalls.find((c) => !offered.has(c.toolName));
  return missing ? text(`I cannot use ${missing.toolName} in this chat.`) : reply;
}

function finishReason(reply: ModelReply): LanguageModelV4GenerateResult['finishReason'] {
  return reply.toolCalls.length
    ? { unified: 'tool-calls', raw: 'tool_calls' }
    : { unified: 'stop', raw: 'stop' };
}

function usageOf(prompt: LanguageModelV4Prompt, reply: ModelReply): LanguageModelV4Usage {
  const input = estimateTokens(JSON.stringify(prompt));
  const output = estimateTokens(reply.text + JSON.stringify(reply.toolCalls.map((c) => c.input)));
  return {
    inputTokens: { total: input, noCache: input, cacheRead: 0, cacheWrite: 0 },
    outputTokens: { total: output, text: output, reasoning: 0 },
  };
}

/** The prompt as the rules read it: what the user said and sent, and the tool results that came back. */
type Turn =
  | { role: 'user'; text: string; media: ModelMedia[] }
  | { role: 'assistant' }
  | { role: 'tool'; toolName: string; content: string };

function readPrompt(prompt: LanguageModelV4Prompt): Turn[] {
  return prompt.flatMap((m): Turn[] => {
    switch (m.role) {
      case 'system':
        return [];
      case 'assistant':
        return [{ role: 'assistant' }];
      case 'tool':
        return m.content.flatMap((part) => {
          if (part.type !== 'tool-result') return [];
          const out = part.output;
          const content =
            out.type === 'text' || out.type === 'error-text'
              ? out.value
              : out.type === 'json' || out.type === 'error-json'
                ? JSON.stringify(out.value)
                : '{}';
          return [{ role: 'tool' as const, toolName: part.toolName, content }];
        });
      case 'user': {
        const texts: string[] = [];
        const media: ModelMedia[] = [];
        for (const part of m.content) {
          if (part.type === 'text') {
            texts.push(part.text);
            media.push(...mediaMarkers(part.text));
          } else if (part.data.type === 'url') {
            media.push({ kind: 'image', url: part.data.url.toString() });
          }
        }
        return [{ role: 'user', text: texts.join('\n'), media }];
      }
    }
  });
}

function decide(turns: Turn[]): ModelReply {
  const last = turns[turns.length - 1];
  if (last?.role === 'tool') return reportResults(turns);
  const user = turns.findLast((m) => m.role === 'user');
  if (!user || user.role !== 'user') return text('Send me a message and I will help.');
  const request = withoutMarkers(user.text).trim();
  const lower = request.toLowerCase();
  const images = mediaOf(turns, 'image');
  const videos = mediaOf(turns, 'video');

  if (/\bmerge\b/.test(lower)) {
    if (videos.length < 2) return text('To merge videos, attach or link at least two videos.');
    const transition = /\bdissolve\b/.test(lower) ? 'dissolve' : /\bfade\b/.test(lower) ? 'fade' : 'none';
    return call(
      `Merging ${videos.length} videos${transition === 'none' ? '' : ` with a ${transition}`}.`,
      'merge_videos',
      {
        video_urls: videos,
        transition,
      },
    );
  }
  if (/\bcrop\b/.test(lower)) {
    const image = images[images.length - 1];
    if (!image) return text('To crop, attach an image or give its URL.');
    const rectangle = cropRectangle(lower);
    if (!rectangle) {
      return text(
        'Tell me which part to keep, e.g. "crop this to the left half" or "crop x=10 y=20 200x100".',
      );
    }
    return call('Cropping the image.', 'crop_image', { image_url: image, ...rectangle });
  }
  const variation = /\b(?:variation|edit|variant)\b[^:]*:\s*(.+)$/is.exec(request);
  if (variation?.[1] && images.length > 0) {
    return call('Making a variation of the image.', 'ai_image_2', {
      prompt: variation[1].trim(),
      image_url: images[images.length - 1],
    });
  }
  const generate =
    /\b(?:generate|create|draw|make)\b\s+(?:an?\s+)?(?:image|picture|photo)\s+(?:of\s+)?(.+)$/is.exec(
      request,
    );
  if (generate?.[1]) {
    return call('Generating the image.', 'ai_image_2', { prompt: generate[1].trim() });
  }
  return text(
    `I am the local agent. I can crop images, generate images and merge videos. You said: "${[...request].slice(0, 200).join('')}"`,
  );
}

function withoutMarkers(s: string): string {
  return s.replace(/\n?\[(?:image|video|audio): [^\]\s]+\]/g, '');
}

function cropRectangle(lower: string): Record<string, number> | undefined {
  const pixels = /x\s*=\s*(\d+)\D+y\s*=\s*(\d+)\D+?(\d+)\s*x\s*(\d+)/.exec(lower);
  if (pixels) {
    const [, x, y, width, height] = pixels.map(Number);
    return { x: x ?? 0, y: y ?? 0, width: width ?? 0, height: height ?? 0 };
  }
  const halves: Record<string, Record<string, number>> = {
    left: { x_percent: 0, y_percent: 0, width_percent: 50, height_percent: 100 },
    right: { x_percent: 50, y_percent: 0, width_percent: 50, height_percent: 100 },
    top: { x_percent: 0, y_percent: 0, width_percent: 100, height_percent: 50 },
    bottom: { x_percent: 0, y_percent: 50, width_percent: 100, height_percent: 50 },
  };
  const half = /\b(left|right|top|bottom)\s+half\b/.exec(lower)?.[1];
  return half ? halves[half] : undefined;
}

function mediaOf(turns: Turn[], kind: 'image' | 'video'): string[] {
  const lastUser = turns.findLast((m) => m.role === 'user');
  if (!lastUser || lastUser.role !== 'user') return [];
  const own = lastUser.media.filter((m) => m.kind === kind).map((m) => m.url);
  if (own.length > 0) return own;
  // "crop this" may point at media sent earlier in the chat.
  return turns.flatMap((m) =>
    m.role === 'user' ? m.media.filter((x) => x.kind === kind).map((x) => x.url) : [],
  );
}

function reportResults(turns: Turn[]): ModelReply {
  const results: string[] = [];
  for (let i = turns.length - 1; i >= 0; i--) {
    const m = turns[i];
    if (m?.role !== 'tool') break;
    const parsed = JSON.parse(m.content) as { assets?: { mimeType?: string }[]; error?: string };
    results.unshift(
      parsed.error
        ? `${m.toolName} failed: ${parsed.error}`
        : `${m.toolName} made ${madeWhat(parsed.assets?.[0]?.mimeType)}`,
    );
  }
  return text(`Done. ${results.join('; ')}.`);
}

/**
 * What a tool made, in words: the reply is read by a person, and the result itself (its URL, a
 * signed address nobody wants to read) is shown beside it as the tool result and the message's media.
 */
function madeWhat(mimeType: string | undefined): string {
  const kind = mimeType?.split('/')[0];
  if (kind === 'image') return 'an image, shown below';
  if (kind === 'video') return 'a video, shown below';
  if (kind === 'audio') return 'an audio clip, shown below';
  return 'its result, shown below';
}

/**
 * A summary as the compaction asks for one (core/model/prompt.ts): the summary so far, then each
 * user request it is given, shortened, kept within the reply's token limit (the newest kept).
 */
function summarise(prompt: LanguageModelV4Prompt, maxOutputTokens: number | undefined): string {
  const request = prompt.findLast((m) => m.role === 'user');
  const body =
    request?.role === 'user' ? request.content.map((p) => (p.type === 'text' ? p.text : '')).join('\n') : '';
  const earlier = /<summary>\n?([\s\S]*?)\n?<\/summary>/.exec(body)?.[1]?.trim() ?? '';
  const asks = [...body.matchAll(/^user: (.*)$/gm)].map((m) =>
    withoutMarkers(m[1] ?? '')
      .trim()
      .slice(0, 60),
  );
  let summary = [earlier, ...asks.map((a) => `The user asked: "${a}".`)].filter(Boolean).join(' ');
  const limit = (maxOutputTokens ?? 1_024) * 3;
  if (Buffer.byteLength(summary) > limit) summary = [...summary].slice(-Math.floor(limit / 4)).join('');
  return summary || 'Nothing of note was said.';
}

function text(content: string): ModelReply {
  return { text: content, toolCalls: [] };
}

function call(content: string, toolName: string, input: Record<string, unknown>): ModelReply {
  const toolCall: ModelToolCall = { id: `local_${toolName}`, toolName, input };
  return { text: content, toolCalls: [toolCall] };
}
