import type { ModelMessage, ModelProvider, ModelReply, ModelRequest, ModelToolCall } from './types';

/**
 * A deterministic, rule-based agent for the embedded default and the tests. It understands plain
 * requests for the three tools and otherwise answers in text; after a tool has run it reports
 * the result. It streams its text in small pieces, as a real model would.
 */
export class LocalModelProvider implements ModelProvider {
  readonly name = 'local';

  /** @param paceMs the pause between streamed pieces (LOCAL_MODEL_PACE) */
  constructor(private readonly paceMs = 0) {}

  async complete(request: ModelRequest): Promise<ModelReply> {
    const reply = decide(request.messages);
    for (const piece of reply.text.match(/.{1,16}/gs) ?? []) {
      if (request.signal.aborted) throw new Error('The model call was cancelled.');
      request.onText(piece);
      await new Promise((resolve) =>
        this.paceMs > 0 ? setTimeout(resolve, this.paceMs) : setImmediate(resolve),
      );
    }
    return reply;
  }
}

function decide(messages: ModelMessage[]): ModelReply {
  const last = messages[messages.length - 1];
  if (last?.role === 'tool') return reportResults(messages);
  const user = [...messages].reverse().find((m) => m.role === 'user');
  if (!user || user.role !== 'user') return text('Send me a message and I will help.');
  const request = user.text.trim();
  const lower = request.toLowerCase();
  const images = mediaOf(messages, 'image');
  const videos = mediaOf(messages, 'video');

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

function mediaOf(messages: ModelMessage[], kind: 'image' | 'video'): string[] {
  const lastUser = [...messages].reverse().find((m) => m.role === 'user');
  if (!lastUser || lastUser.role !== 'user') return [];
  const own = lastUser.media.filter((m) => m.kind === kind).map((m) => m.url);
  if (own.length > 0) return own;
  // "crop this" may point at media sent earlier in the chat.
  return messages.flatMap((m) =>
    m.role === 'user' ? m.media.filter((x) => x.kind === kind).map((x) => x.url) : [],
  );
}

function reportResults(messages: ModelMessage[]): ModelReply {
  const results: string[] = [];
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
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

function text(content: string): ModelReply {
  return { text: content, toolCalls: [] };
}

function call(content: string, toolName: string, input: Record<string, unknown>): ModelReply {
  const toolCall: ModelToolCall = { id: `local_${toolName}`, toolName, input };
  return { text: content, toolCalls: [toolCall] };
}
