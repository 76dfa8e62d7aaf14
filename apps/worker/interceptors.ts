import type { Context } from '@temporalio/activity';
import type { ActivityInterceptors } from '@temporalio/worker';
import { currentLogFields, withLogContext, type LogFields } from '../../core/logging/context';
import { activityDuration } from '../../core/metrics/worker';
import { AGENT_WORKFLOW_TYPE } from '../../workflows/agent.contract';

const ID_FIELDS = ['userId', 'chatId', 'runId', 'toolCallId', 'deliveryId'] as const;

/** The ids an activity's input names; an agent run's execution is its chat's (workflow id = chat id). */
function idsOf(ctx: Context, input: unknown): LogFields {
  const fields: LogFields = {};
  if (input && typeof input === 'object') {
    for (const key of ID_FIELDS) {
      const value = (input as Record<string, unknown>)[key];
      if (typeof value === 'string') fields[key] = value;
    }
  }
  if (ctx.info.workflowType === AGENT_WORKFLOW_TYPE) fields.chatId ??= ctx.info.workflowExecution?.workflowId;
  return fields;
}

/**
 * Around every activity attempt: the ids of its run on every line it logs (through the service's
 * logger, or the SDK's context log, whose `runId` is Temporal's: ours goes as `agentRunId`), and
 * its duration by type and outcome.
 */
export function observeActivity(ctx: Context): ActivityInterceptors {
  return {
    inbound: {
      async execute(input, next) {
        const stop = activityDuration.startTimer({ activity: ctx.info.activityType });
        try {
          const result = await withLogContext(idsOf(ctx, input.args[0]), () => next(input));
          stop({ outcome: 'completed' });
          return result;
        } catch (err) {
          stop({ outcome: ctx.cancellationSignal.aborted ? 'cancelled' : 'failed' });
          throw err;
        }
      },
    },
    outbound: {
      getLogAttributes(input, next) {
        const { runId, ...ids } = currentLogFields();
        return next({ ...input, ...ids, ...(runId ? { agentRunId: runId } : {}) });
      },
    },
  };
}
