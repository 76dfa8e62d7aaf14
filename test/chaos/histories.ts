/**
 * The chaos suite's reading of the Temporal histories of a scenario's load, held against its rows
 * and the receiver's log: each run's execution closed with the status its row has, its model
 * steps and tool runs recorded as often as the run's outcome needs and no more; each direct tool
 * call's execution closed as its row says, with the provider run its row has; each delivery's
 * execution closed as its row says, and the receiver posted no more often than the attempts
 * Temporal made of it.
 */
import type { Client } from '@temporalio/client';
import {
  closedAsRow,
  describeClose,
  finishedCount,
  readExecutions,
  tallyOf,
  type Execution,
} from '../support/histories';
import { AGENT_WORKFLOW_TYPE } from '../../workflows/agent.contract';
import { runIdSearchAttribute } from '../../workflows/search-attributes';
import { TOOL_CALL_WORKFLOW_TYPE, toolCallWorkflowId } from '../../workflows/tool-call.contract';
import { WEBHOOK_DELIVERY_WORKFLOW_TYPE } from '../../workflows/webhook-delivery.contract';

export interface LoadRows {
  userId: string;
  /** When the scenario's load began: its executions started after. */
  since: Date;
  runs: { runId: string; status: string }[];
  /** Every tool call of the load: a run's (runId set) or a direct call's. */
  toolCalls: { id: string; runId: string | null; status: string; providerRunId: string | null }[];
  deliveries: { id: string; envelopeId: string; event: string; status: string }[];
  /** The attempt log: each delivery's recorded attempts. */
  attempts: Map<string, { attempt: number; statusCode: number | null }[]>;
  /** POSTs the receiver answered, per delivery id. */
  posts: Map<string, number>;
}

export interface HistoryTally {
  executions: number;
  lost: string[];
  doubled: string[];
  /** An execution that closed otherwise than its row says, or did what its row does not show. */
  mismatched: string[];
}

/** What an execution returned, when it is an object with `key`. */
const field = (value: unknown, key: string): unknown =>
  typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined;

const groupBy = <T>(items: T[], key: (item: T) => string | undefined): Map<string, T[]> => {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    if (k !== undefined) groups.set(k, [...(groups.get(k) ?? []), item]);
  }
  return groups;
};

/** Activities scheduled in a closed execution that never closed: Temporal lost track of them. */
function unclosed(e: Execution): string[] {
  return [...e.activities]
    .filter(([, t]) => t.scheduled > t.completed + t.failed + t.timedOut + t.canceled)
    .map(([type]) => type);
}

export async function checkHistories(client: Client, load: LoadRows): Promise<HistoryTally> {
  const lost: string[] = [];
  const doubled: string[] = [];
  const mismatched: string[] = [];
  const executions = await readExecutions(
    client,
    `UserId = '${load.userId}' AND StartTime >= '${load.since.toISOString()}'`,
  );
  for (const e of executions)
    for (const type of unclosed(e))
      mismatched.push(`${e.type} ${e.workflowId}: ${type} scheduled, never closed`);

  const agents = groupBy(
    executions.filter((e) => e.type === AGENT_WORKFLOW_TYPE),
    (e) => e.attributes.get(runIdSearchAttribute),
  );
  const callsOfRun = groupBy(
    load.toolCalls.filter((c) => c.runId),
    (c) => c.runId ?? undefined,
  );
  for (const run of load.runs) {
    const found = agents.get(run.runId) ?? [];
    if (found.length === 0) {
      lost.push(`run ${run.runId}: no execution in Temporal`);
      continue;
    }
    if (found.length > 1) doubled.push(`run ${run.runId}: ${found.length} executions`);
    const e = found[found.length - 1] as Execution;
    if (!closedAsRow(e, run.status))
      mismatched.push(`run ${run.runId} is ${run.status}, its execution closed ${describeClose(e)}`);
    const calls = callsOfRun.get(run.runId) ?? [];
    const steps = tallyOf(e, 'agentStep').results.filter((r) => field(r, 'kind') !== 'handoff').length;
    if (run.status === 'COMPLETE' && steps !== calls.length + 1)
      (steps > calls.length + 1 ? doubled : mismatched).push(
        `run ${run.runId}: ${steps} model steps recorded for ${calls.length} tool call(s)`,
      );
    const tools = tallyOf(e, 'runTool');
    const ran = tools.results.map((r) => String(field(r, 'providerRunId')));
    const succeeded = calls.filter((c) => c.status === 'SUCCEEDED').map((c) => String(c.providerRunId));
    if (ran.length > calls.length)
      doubled.push(`run ${run.runId}: ${ran.length} tool runs recorded for ${calls.length} call(s)`);
    else if (ran.sort().join() !== succeeded.sort().join())
      mismatched.push(
        `run ${run.runId}: tool runs recorded ${ran.join(', ') || 'none'}, succeeded ${succeeded.join(', ') || 'none'}`,
      );
    if (finishedCount(tallyOf(e, 'finishRun')) > 1) doubled.push(`run ${run.runId}: finished more than once`);
  }

  const toolExecutions = groupBy(
    executions.filter((e) => e.type === TOOL_CALL_WORKFLOW_TYPE),
    (e) => e.workflowId,
  );
  for (const call of load.toolCalls.filter((c) => !c.runId)) {
    const found = toolExecutions.get(toolCallWorkflowId(call.id)) ?? [];
    if (found.length === 0) lost.push(`tool call ${call.id}: no execution in Temporal`);
    // A retry after an execution closed starts another, which finds the call settled: each must
    // tell the call's outcome, and none may run the tool again.
    for (const e of found) {
      const ok =
        call.status === 'SUCCEEDED'
          ? e.closed === 'Completed' && field(e.result, 'providerRunId') === call.providerRunId
          : e.closed === 'Failed' || e.closed === 'Canceled';
      if (!ok)
        mismatched.push(
          `tool call ${call.id} is ${call.status} (${call.providerRunId}), its execution closed ${describeClose(e)} (${String(field(e.result, 'providerRunId'))})`,
        );
      const ran = tallyOf(e, 'runTool').results.length;
      if (ran > 1) doubled.push(`tool call ${call.id}: ${ran} tool runs in one execution`);
    }
  }

  const deliveryExecutions = groupBy(
    executions.filter((e) => e.type === WEBHOOK_DELIVERY_WORKFLOW_TYPE),
    (e) => e.workflowId,
  );
  for (const d of load.deliveries) {
    const found = deliveryExecutions.get(d.envelopeId) ?? [];
    if (found.length === 0) {
      lost.push(`delivery ${d.id} (${d.event}): no execution in Temporal`);
      continue;
    }
    if (found.length > 1) doubled.push(`delivery ${d.id} (${d.event}): ${found.length} executions`);
    const e = found[found.length - 1] as Execution;
    const closedRight =
      d.status === 'DELIVERED'
        ? e.closed === 'Completed' && e.result === 'DELIVERED'
        : e.closed === 'Failed' && e.failureType === 'WEBHOOK_DELIVERY_FAILED';
    if (!closedRight)
      mismatched.push(
        `delivery ${d.id} is ${d.status}, its execution closed ${describeClose(e)} (${String(e.result)})`,
      );
    const posts = tallyOf(e, 'deliverWebhook');
    // Each marker is an attempt (the first, a local activity of one attempt), each attempt of the
    // later activity another; a workflow task lost with its worker may have taken a first attempt
    // no marker records.
    const allowed = posts.localCompleted + posts.localFailed + posts.attempts + e.lostTasks;
    const logged = load.attempts.get(d.id) ?? [];
    const received = load.posts.get(d.id) ?? 0;
    const highest = Math.max(0, ...logged.map((a) => a.attempt));
    if (received > allowed || logged.length > allowed || highest > allowed)
      doubled.push(
        `delivery ${d.id} (${d.event}): Temporal made at most ${allowed} attempt(s), the log has ${logged.length} (up to number ${highest}), the receiver answered ${received} POST(s)`,
      );
    if (d.status === 'DELIVERED' && !logged.some((a) => a.statusCode !== null && a.statusCode < 300))
      mismatched.push(`delivery ${d.id} is DELIVERED with no 2xx attempt in its log`);
    if (d.status === 'DELIVERED' && finishedCount(tallyOf(e, 'markDeliveryFailed')) > 0)
      mismatched.push(`delivery ${d.id} is DELIVERED, and its execution marked it failed`);
  }
  return { executions: executions.length, lost, doubled, mismatched };
}
