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

export interface ModelRequest {
  messages: ModelMessage[];
  tools: ModelToolSpec[];
  /** Called with each piece of text as it streams in. */
  onText: (delta: string) => void;
  signal: AbortSignal;
}

export interface ModelReply {
  text: string;
  toolCalls: ModelToolCall[];
}

export interface ModelProvider {
  readonly name: string;
  complete(request: ModelRequest): Promise<ModelReply>;
}
