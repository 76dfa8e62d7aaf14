import { workflowInfo, type WorkflowInterceptorsFactory } from '@temporalio/workflow';
import { chatIdSearchAttribute, runIdSearchAttribute, userIdSearchAttribute } from './search-attributes';

/**
 * Lines a workflow logs (`log` of @temporalio/workflow) carry the ids every other line does, read
 * from the execution's search attributes: `agentRunId` (Temporal's own `runId` is the execution's;
 * the worker's logger turns them into `runId` and `temporalRunId`), `chatId` and `userId`. Log
 * attributes never reach the history, so executions replay as before.
 */
export const interceptors: WorkflowInterceptorsFactory = () => ({
  outbound: [
    {
      getLogAttributes(input, next) {
        const attributes = workflowInfo().typedSearchAttributes;
        const ids = {
          agentRunId: attributes.get(runIdSearchAttribute),
          chatId: attributes.get(chatIdSearchAttribute),
          userId: attributes.get(userIdSearchAttribute),
        };
        return next({
          ...input,
          ...Object.fromEntries(Object.entries(ids).filter(([, v]) => v !== undefined)),
        });
      },
    },
  ],
});
