import { randomUUID } from 'node:crypto';
import { temporal } from '@temporalio/proto';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { preparedTool } from '../../testkit/prepared';
import { installTestRuntime } from '../../testkit/stack';
import type { AgentRunInput } from '../../workflows/agent.contract';
import { SEARCH_ATTRIBUTES } from '../../workflows/search-attributes';

/**
 * Temporal's time-skipping test server, with our search attributes: it knows only those it is
 * told of, as a real cluster does.
 */
export async function timeSkippingEnvironment(): Promise<TestWorkflowEnvironment> {
  await installTestRuntime();
  const env = await TestWorkflowEnvironment.createTimeSkipping({
    server: { executable: { type: 'existing-path', path: await preparedTool('temporal-test-server.sh') } },
  });
  await env.connection.operatorService.addSearchAttributes({
    namespace: env.namespace ?? 'default',
    searchAttributes: Object.fromEntries(
      SEARCH_ATTRIBUTES.map((k) => [
        k.name,
        temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
      ]),
    ),
  });
  return env;
}

/** A turn's workflow input with fresh ids, as admission would give it. */
export function agentRunInput(input: Partial<AgentRunInput> = {}): AgentRunInput {
  return {
    runId: randomUUID(),
    chatId: randomUUID(),
    userId: randomUUID(),
    messageId: randomUUID(),
    assistantMessageId: randomUUID(),
    traceId: 'a'.repeat(32),
    planMode: false,
    planApprovalTimeoutMs: 60_000,
    ...input,
  };
}
