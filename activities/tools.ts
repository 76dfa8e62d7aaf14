import { randomUUID } from 'node:crypto';
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { WorkerDeps } from '../apps/worker/deps';
import { withTransaction } from '../core/db/client';
import { AppError } from '../core/errors/app-error';
import { isFailureType, permanentFailure } from '../core/errors/failures';
import type { ToolResult } from '../core/schemas/events';
import { runProvider } from '../core/tools/providers';
import { isToolName, TOOLS } from '../core/tools/registry';
import type { ProviderProgress, RunToolInput } from '../core/tools/types';

/** Local providers report no progress of their own; this keeps their heartbeats flowing. */
const HEARTBEAT_INTERVAL_MS = 5_000;

export type { RunToolInput } from '../core/tools/types';

export function createToolsActivities(deps: WorkerDeps) {
  const { pool } = deps.db;

  const markFailed = (toolCallId: string, error: string) =>
    pool.query(
      `UPDATE "ToolCall" SET status = 'FAILED', error = $2, "finishedAt" = now() WHERE id = $1 AND status = 'RUNNING'`,
      [toolCallId, error],
    );

  const storedCall = async (toolCallId: string) => {
    const { rows } = await pool.query<{
      status: 'RUNNING' | 'SUCCEEDED' | 'FAILED';
      result: ToolResult | null;
      error: string | null;
    }>(`SELECT status, result, error FROM "ToolCall" WHERE id = $1`, [toolCallId]);
    return rows[0];
  };

  return {
    /**
     * Runs one tool call to its result, at most one charge however often it is retried: the row is
     * created once, a call already SUCCEEDED answers its stored result, and the result, the
     * charge and the SUCCEEDED state are written in one transaction, the charge keyed by the call.
     */
    async runTool(input: RunToolInput): Promise<ToolResult> {
      const ctx = Context.current();
      await pool.query(
        `INSERT INTO "ToolCall" (id, "userId", "chatId", "runId", "toolName", status, input)
         VALUES ($1, $2, $3, $4, $5, 'RUNNING', $6::jsonb)
         ON CONFLICT (id) DO NOTHING`,
        [
          input.toolCallId,
          input.userId,
          input.chatId ?? null,
          input.runId ?? null,
          input.toolName,
          JSON.stringify(input.input ?? {}),
        ],
      );
      const existing = await storedCall(input.toolCallId);
      if (existing?.status === 'SUCCEEDED' && existing.result) return existing.result;
      if (existing?.status === 'FAILED') {
        throw permanentFailure('PROVIDER_ERROR', existing.error ?? 'The tool call failed.');
      }
      if (!isToolName(input.toolName)) {
        const error = `There is no tool named ${input.toolName}.`;
        await markFailed(input.toolCallId, error);
        throw permanentFailure('UNKNOWN_TOOL', error);
      }

      const toolName = input.toolName;
      let progress = ctx.info.heartbeatDetails as ProviderProgress | undefined;
      const heartbeat = (details?: ProviderProgress) => {
        if (details) progress = details;
        ctx.heartbeat(progress);
      };
      const timer = setInterval(() => heartbeat(), HEARTBEAT_INTERVAL_MS);
      const started = Date.now();
      let outcome;
      try {
        outcome = await runProvider(toolName, input.input, {
          config: deps.config,
          db: deps.db,
          storage: deps.storage,
          http: deps.http,
          logger: deps.logger.child({ toolCallId: input.toolCallId, toolName }),
          userId: input.userId,
          toolCallId: input.toolCallId,
          signal: ctx.cancellationSignal,
          heartbeat,
          previous: progress,
        });
      } catch (err) {
        if (ctx.cancellationSignal.aborted) {
          await markFailed(input.toolCallId, 'The tool call was cancelled.');
          throw ctx.cancellationSignal.reason;
        }
        const failure =
          err instanceof AppError && isFailureType(err.code) ? permanentFailure(err.code, err.message) : err;
        if (failure instanceof ApplicationFailure && failure.nonRetryable) {
          await markFailed(input.toolCallId, failure.message);
        }
        throw failure;
      } finally {
        clearInterval(timer);
      }

      const result: ToolResult = {
        toolName,
        output: outcome.output,
        assets: outcome.assets,
        creditCost: TOOLS[toolName].price(deps.config),
        durationMs: Date.now() - started,
        providerRunId: outcome.providerRunId,
      };
      const recorded = await withTransaction(pool, async (client) => {
        const updated = await client.query(
          `UPDATE "ToolCall" SET status = 'SUCCEEDED', result = $2::jsonb, "providerRunId" = $3, "creditCost" = $4,
                "durationMs" = $5, "finishedAt" = now(), error = NULL
          WHERE id = $1 AND status = 'RUNNING'`,
          [
            input.toolCallId,
            JSON.stringify(result),
            result.providerRunId,
            result.creditCost,
            result.durationMs,
          ],
        );
        const recorded = updated.rowCount === 1;
        if (recorded) {
          await client.query(
            `INSERT INTO "CreditLedgerEntry" (id, "userId", "toolCallId", amount, reason)
           VALUES ($1, $2, $3, $4, $5)
           ON CONFLICT ("toolCallId") DO NOTHING`,
            [randomUUID(), input.userId, input.toolCallId, result.creditCost, `tool:${toolName}`],
          );
        }
        return recorded;
      });
      if (recorded) return result;
      // Another attempt finished first, or the run ended the call meanwhile: the row has the word.
      const now = await storedCall(input.toolCallId);
      if (now?.status === 'SUCCEEDED' && now.result) return now.result;
      throw permanentFailure(
        'PROVIDER_ERROR',
        now?.error ?? 'The tool call ended before its result was recorded.',
      );
    },

    /** Closes a call its workflow gave up on (retries spent, or cancelled); a finished call is left alone. */
    async markToolCallFailed({ toolCallId, error }: { toolCallId: string; error: string }): Promise<void> {
      await markFailed(toolCallId, error);
    },
  };
}

export type ToolsActivities = ReturnType<typeof createToolsActivities>;
