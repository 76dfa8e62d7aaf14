import type { OAuthGrantDto } from '../../../core/schemas/identity';
import type { DeliveryDto, EndpointDto } from '../../../core/schemas/webhooks';

/** The API's answers as the console reads them (the schemas in core/schemas are the source). */

export interface User {
  id: string;
  email: string;
}

export interface Page<T> {
  data: T[];
  nextCursor: string | null;
}

export interface Chat {
  id: string;
  title: string;
  isFavorite: boolean;
  lastMessageAt: string | null;
  createdAt: string;
}

export interface ToolAsset {
  url: string;
  mimeType: string;
  filename?: string;
}

export interface ToolResult {
  toolName: string;
  output: { url: string; provider: string } & Record<string, unknown>;
  assets: ToolAsset[];
  creditCost: string;
  durationMs: number;
}

export type ContentBlock =
  | { type: 'text'; text: string }
  | { type: 'image' | 'video' | 'audio'; attachmentId: string | null; url: string }
  | { type: 'tool_use'; toolCallId: string; toolName: string; input: unknown }
  | { type: 'tool_result'; toolCallId: string; toolName: string; result?: ToolResult; error?: string };

export interface Attachment {
  id: string;
  filename: string;
  mimeType: string;
  url: string;
}

export interface Message {
  id: string;
  chatId: string;
  role: 'user' | 'assistant';
  runId: string | null;
  contentBlocks: ContentBlock[];
  attachments: Attachment[];
  createdAt: string;
}

export interface ToolCall {
  id: string;
  toolName: string;
  status: 'RUNNING' | 'SUCCEEDED' | 'FAILED';
  input: unknown;
  result: ToolResult | null;
  error: string | null;
}

export interface Waitpoint {
  id: string;
  status: 'PENDING' | 'APPROVED' | 'REJECTED' | 'EXPIRED' | 'CANCELLED';
  plan: { summary: string; steps: { toolName: string; input: unknown; reason: string }[] };
  feedback: string | null;
  createdAt: string;
  resolvedAt: string | null;
  /** Present once the client contract carries them. */
  planHash?: string;
  decidedBy?: { via: string; apiKeyId: string | null; sessionId: string | null } | null;
  decidedAt?: string | null;
}

export type RunStatus = 'QUEUED' | 'RUNNING' | 'WAITING' | 'COMPLETE' | 'FAILED' | 'CANCELLED';

export interface RunSnapshot {
  id: string;
  chatId: string;
  status: RunStatus;
  planMode: boolean;
  text: string;
  toolCalls: ToolCall[];
  waitpoints: Waitpoint[];
  error: string | null;
  /** Set once a cancel is recorded; the status turns CANCELLED when the run has stopped. */
  cancelRequestedAt?: string | null;
}

export const isTerminal = (status: RunStatus) =>
  status === 'COMPLETE' || status === 'FAILED' || status === 'CANCELLED';

export interface QueuedTurn {
  chatId: string;
  messageId: string;
  runId: string;
}

export interface ApiKey {
  id: string;
  name: string;
  prefix: string;
  lastUsedAt: string | null;
  createdAt: string;
}

export type OAuthGrant = OAuthGrantDto;

export type Endpoint = EndpointDto;

export type Delivery = DeliveryDto;

/** An attempt; `signedContent` (`<timestamp>.<body>`, what the signature covers) once the client contract carries it. */
export type Attempt = DeliveryDto['attempts'][number] & { signedContent?: string | null };
