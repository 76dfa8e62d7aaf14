import type { ContentBlock } from '../schemas/runs';
import { messageTokens, withSummary } from './prompt';
import { estimateTokens } from './tokens';
import type { ModelMessage, ModelToolSpec } from './types';

/**
 * How a step's context is built to its model's window (docs/models.md, "Long chats"): the
 * instructions, the tools and the current turn always; the turns before it whole, newest first, as
 * many as fit; and what does not fit replaced by a summary the model wrote (compaction), stored
 * with the chat and reused by its later turns, extended when it falls behind. Nothing is cut
 * silently: a turn that cannot fit even so fails with a clear error.
 */

/** The most messages after the summary a step reads; more than this makes the step compact. */
export const HISTORY_READ_LIMIT = 64;
/** The most earlier messages a compaction keeps whole: the summary takes in the rest. */
export const RECENT_MAX_MESSAGES = 32;

/** The longest summary asked for, in tokens: an eighth of the window, at most 2,048. */
export function summaryMaxTokens(contextWindow: number): number {
  return Math.min(2_048, Math.floor(contextWindow / 8));
}

/** A stored message, with where it sits in its chat. */
export interface PlacedMessage {
  id: string;
  createdAt: string;
  message: ModelMessage;
}

export interface ContextInput {
  instructions: string;
  tools: readonly ModelToolSpec[];
  summary: string | null;
  /** The messages after the summary, oldest first, the run's own last. */
  history: readonly PlacedMessage[];
  /** False when messages older than `history` lie after the summary unread. */
  historyComplete: boolean;
  /** This turn's assistant and tool messages so far. */
  turn: readonly ModelMessage[];
  contextWindow: number;
  maxOutputTokens: number;
}

export type ContextPlan =
  | { kind: 'ready'; system: string; messages: ModelMessage[]; inputTokens: number }
  /**
   * The summary must take in every message after it and before `before` (the first message kept
   * whole), then the plan is made again with that summary and the `keep` messages.
   */
  | { kind: 'compact'; before: { createdAt: string; id: string }; keep: PlacedMessage[] }
  /** The instructions, tools and current turn alone do not fit. */
  | { kind: 'too-long'; tokens: number };

export function toolTokens(tools: readonly ModelToolSpec[]): number {
  return tools.length ? estimateTokens(JSON.stringify(tools)) : 0;
}

export function planContext(input: ContextInput): ContextPlan {
  const current = input.history[input.history.length - 1];
  const earlier = input.history.slice(0, -1);
  const fixed =
    estimateTokens(input.instructions) +
    toolTokens(input.tools) +
    (current ? messageTokens(current.message) : 0) +
    input.turn.reduce((n, m) => n + messageTokens(m), 0);
  const room = input.contextWindow - input.maxOutputTokens - fixed;
  if (room < 0) return { kind: 'too-long', tokens: fixed + input.maxOutputTokens };

  const summaryTokens = input.summary ? estimateTokens(input.summary) : 0;
  const earlierTokens = earlier.reduce((n, m) => n + messageTokens(m.message), 0);
  const ready = () => assemble(input);
  if (input.historyComplete && summaryTokens + earlierTokens <= room) return ready();

  // Keep the newest whole turns (each starts at a user message) that fit beside a full summary.
  const recentRoom = room - summaryMaxTokens(input.contextWindow);
  let keepFrom = earlier.length;
  let tokens = 0;
  for (let i = earlier.length - 1; i >= 0; i--) {
    const m = earlier[i] as PlacedMessage;
    tokens += messageTokens(m.message);
    if (tokens > recentRoom || earlier.length - i > RECENT_MAX_MESSAGES) break;
    if (m.message.role === 'user') keepFrom = i;
  }
  // Everything fits but the summary is longer than asked for: nothing is left to take in.
  if (keepFrom === 0 && input.historyComplete) return ready();
  const first = earlier[keepFrom] ?? current;
  if (!first) return ready();
  return {
    kind: 'compact',
    before: { createdAt: first.createdAt, id: first.id },
    keep: earlier.slice(keepFrom),
  };
}

/**
 * The context as it stands: the instructions with the summary, the history and the turn. What a
 * plan that fits answers, and what a step goes on with once its compaction has run.
 */
export function assemble(input: ContextInput): Extract<ContextPlan, { kind: 'ready' }> {
  const messages = [...input.history.map((m) => m.message), ...input.turn];
  const system = withSummary(input.instructions, input.summary);
  return {
    kind: 'ready',
    system,
    messages,
    inputTokens:
      estimateTokens(system) + toolTokens(input.tools) + messages.reduce((n, m) => n + messageTokens(m), 0),
  };
}

/** A stored message as the model reads it (its file URLs refreshed by the caller). */
export function toModelMessage(role: 'user' | 'assistant', blocks: ContentBlock[]): ModelMessage {
  if (role === 'user') {
    return {
      role: 'user',
      text: blocks.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('\n'),
      media: blocks.flatMap((b) =>
        b.type === 'image' || b.type === 'video' || b.type === 'audio' ? [{ kind: b.type, url: b.url }] : [],
      ),
    };
  }
  // Earlier turns' tool exchanges are summarised as text: their provider call ids are long gone.
  const parts = blocks.flatMap((b) => {
    if (b.type === 'text') return [b.text];
    if (b.type === 'tool_result')
      return [
        b.result ? `[${b.toolName} result: ${b.result.output.url}]` : `[${b.toolName} failed: ${b.error}]`,
      ];
    return [];
  });
  return { role: 'assistant', text: parts.join('\n'), toolCalls: [] };
}
