import type { Config } from '../config/config';
import type { Database } from '../db/client';
import type { Logger } from '../logging/logger';
import type { GuardedHttp } from '../net/guarded-http';
import type { Transport } from '../schemas/common';
import type { ToolAsset } from '../schemas/events';
import type { ObjectStorage } from '../storage/storage';

/** What one tool call gets: the runTool activity builds it from its deps and its context. */
export interface ToolContext {
  config: Config;
  db: Database;
  storage: ObjectStorage;
  http: GuardedHttp;
  logger: Logger;
  userId: string;
  toolCallId: string;
  /** Aborted when the activity is cancelled (route timeout, run cancelled). */
  signal: AbortSignal;
  /** Keeps the activity alive while it waits; details survive into a retry. */
  heartbeat(details?: ProviderProgress): void;
  /** The last progress a previous attempt recorded, to resume its provider job, not start anew. */
  previous: ProviderProgress | undefined;
}

/** A remote provider's job, recorded in heartbeats so a retried attempt polls the same job. */
export interface ProviderProgress {
  providerRunId: string;
  pollUrl?: string;
}

export interface ProviderOutcome {
  providerRunId: string;
  output: { url: string; provider: string } & Record<string, unknown>;
  assets: ToolAsset[];
}

/** Input of the runTool activity, from the tool route's workflow or the agent's tool step. */
export interface RunToolInput {
  toolCallId: string;
  toolName: string;
  /** As the caller gave it; runTool validates it against the tool's schema. */
  input: unknown;
  userId: string;
  chatId?: string;
  runId?: string;
  /** The route a direct call came by; a run's call records its run's. */
  via?: Transport;
}

/**
 * Whether an aborted tool call was stopped by its caller (its run, or the route's timeout,
 * cancelled it), rather than its attempt ending for another to take over (a heartbeat timeout,
 * this worker stopping). Only then is the provider's job cancelled and the call closed as FAILED:
 * otherwise the next attempt resumes the same job.
 */
export function stoppedByCaller(signal: AbortSignal): boolean {
  const reason: unknown = signal.reason;
  // Temporal's reasons: CANCELLED (the workflow asked), NOT_FOUND (the workflow is gone, so no
  // attempt will follow); TIMED_OUT, WORKER_SHUTDOWN, PAUSED and RESET all leave a next attempt.
  return signal.aborted && reason instanceof Error && ['CANCELLED', 'NOT_FOUND'].includes(reason.message);
}
