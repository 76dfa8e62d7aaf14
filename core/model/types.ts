/** The model's view of a chat: provider-neutral, built from stored messages and content blocks. */
export interface ModelMedia {
  kind: 'image' | 'video' | 'audio';
  url: string;
}

export type ModelMessage =
  | { role: 'user'; text: string; media: ModelMedia[] }
  | { role: 'assistant'; text: string; toolCalls: ModelToolCall[] }
  | { role: 'tool'; toolCallId: string; toolName: string; content: string };

export interface ModelToolCall {
  /** The provider's id for the call, echoed back with its result. */
  id: string;
  toolName: string;
  input: unknown;
}

export interface ModelToolSpec {
  name: string;
  description: string;
  /** JSON Schema of the tool's input. */
  parameters: Record<string, unknown>;
}

export interface ModelReply {
  text: string;
  toolCalls: ModelToolCall[];
}

/** Tokens of one model call as its provider counted them; cached input is part of the input. */
export interface ModelUsage {
  inputTokens: number;
  outputTokens: number;
  cachedInputTokens: number;
}
