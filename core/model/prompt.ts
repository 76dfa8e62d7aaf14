import type { ModelMessage as SdkMessage } from 'ai';
import { IMAGE_TOKENS, estimateTokens } from './tokens';
import type { ModelMedia, ModelMessage } from './types';

/**
 * The chat as the AI SDK takes it. Images go as image parts (the provider fetches the URL, or the
 * SDK downloads it through the guarded client for one that cannot: see complete.ts); videos and
 * audio as their URLs in the text, `[video: https://…]`, which every model can read and pass to a
 * tool, and no provider is asked to fetch.
 */
export function toSdkMessages(messages: readonly ModelMessage[]): SdkMessage[] {
  return messages.map((m): SdkMessage => {
    switch (m.role) {
      case 'user': {
        const markers = m.media.filter((x) => x.kind !== 'image').map(marker);
        const text = [m.text, ...markers].join('\n');
        const images = m.media.filter((x) => x.kind === 'image');
        if (images.length === 0) return { role: 'user', content: text };
        return {
          role: 'user',
          content: [
            { type: 'text', text },
            // The exact type is the provider's to tell, or the download's (which sniffs the bytes).
            ...images.map((x) => ({ type: 'file' as const, data: new URL(x.url), mediaType: 'image' })),
          ],
        };
      }
      case 'assistant':
        return {
          role: 'assistant',
          content: [
            ...(m.text ? [{ type: 'text' as const, text: m.text }] : []),
            ...m.toolCalls.map((c) => ({
              type: 'tool-call' as const,
              toolCallId: c.id,
              toolName: c.toolName,
              input: c.input,
            })),
          ],
        };
      case 'tool':
        return {
          role: 'tool',
          content: [
            {
              type: 'tool-result',
              toolCallId: m.toolCallId,
              toolName: m.toolName,
              output: { type: 'text', value: m.content },
            },
          ],
        };
    }
  });
}

function marker(media: ModelMedia): string {
  return `[${media.kind}: ${media.url}]`;
}

/** The media a text names with markers (`[video: https://…]`), as toSdkMessages writes them. */
export function mediaMarkers(text: string): ModelMedia[] {
  return [...text.matchAll(/\[(image|video|audio): ([^\]\s]+)\]/g)].map((m) => ({
    kind: m[1] as ModelMedia['kind'],
    url: m[2] ?? '',
  }));
}

/** Tokens a message takes in the context, estimated (core/model/tokens.ts). */
export function messageTokens(m: ModelMessage): number {
  switch (m.role) {
    case 'user':
      return (
        estimateTokens(m.text) +
        m.media.reduce((n, x) => n + (x.kind === 'image' ? IMAGE_TOKENS : estimateTokens(marker(x))), 0) +
        4
      );
    case 'assistant':
      return estimateTokens(m.text + JSON.stringify(m.toolCalls)) + 4;
    case 'tool':
      return estimateTokens(m.content) + 8;
  }
}

/**
 * The provider option (under `local`) that asks the local model for a summary; other providers
 * ignore options under another provider's name.
 */
export const SUMMARY_PROVIDER_OPTION = 'summary';

/** The instructions of a compaction call. */
export const SUMMARY_INSTRUCTIONS =
  'You keep a running summary of a conversation between a user and an assistant that works with media (cropping and generating images, merging videos). Given the summary so far and the messages that follow it, write the updated summary: what the user asked for, what was decided and made (keep every URL of a result the user may refer to), and what is still open. Plain prose, in the language of the conversation, no preamble.';

/** The request of a compaction call: the summary so far and the messages it is to take in, as a transcript. */
export function summaryRequest(summary: string | null, messages: readonly ModelMessage[]): string {
  const lines = messages.map((m) => {
    switch (m.role) {
      case 'user':
        return `user: ${[m.text, ...m.media.map(marker)].join(' ').replace(/\s*\n\s*/g, ' ')}`;
      case 'assistant':
        return `assistant: ${m.text.replace(/\s*\n\s*/g, ' ')}`;
      case 'tool':
        return `tool ${m.toolName}: ${m.content}`;
    }
  });
  return `<summary>\n${summary ?? ''}\n</summary>\n\n<messages>\n${lines.join('\n')}\n</messages>`;
}

/**
 * The system prompt of a step whose chat has a summary: the instructions, then the summary of what
 * the recent turns that follow no longer show (in the system prompt, so the turns alternate as
 * every provider expects).
 */
export function withSummary(instructions: string, summary: string | null): string {
  if (!summary) return instructions;
  return `${instructions}\n\nSummary of the earlier part of this conversation (its older messages are not shown):\n${summary}`;
}
