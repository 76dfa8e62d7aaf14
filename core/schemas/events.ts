/** The four webhook event kinds of the spec; endpoints subscribe to a non-empty subset. */
export const WEBHOOK_EVENTS = ['agent.started', 'agent.completed', 'agent.failed', 'tool.completed'] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

/** `data` of agent.* events: all strings, as the spec says. */
export interface AgentEventData {
  chatId: string;
  runId: string;
  messageId: string;
  traceId: string;
  /** The Temporal workflow run id. */
  processId: string;
  status: 'QUEUED' | 'COMPLETE' | 'FAILED' | 'CANCELLED';
  assistantMessageId: string;
  error?: string;
}

export interface ToolAsset {
  url: string;
  mimeType: string;
  filename?: string;
}

/** The spec's Tool result. */
export interface ToolResult {
  toolName: string;
  output: { url: string; provider: string } & Record<string, unknown>;
  assets: ToolAsset[];
  creditCost: string;
  durationMs: number;
  providerRunId: string;
}

export interface ToolCompletedData extends ToolResult {
  toolCallId: string;
  chatId?: string;
  runId?: string;
}

/**
 * One event for the emitter. The idempotency key is the run id for agent events and the tool
 * call id for tool.completed, so emitting the same event twice posts nothing new.
 */
export type EmitWebhookEventInput =
  | {
      userId: string;
      event: 'agent.started' | 'agent.completed' | 'agent.failed';
      idempotencyKey: string;
      data: AgentEventData;
    }
  | { userId: string; event: 'tool.completed'; idempotencyKey: string; data: ToolCompletedData };
