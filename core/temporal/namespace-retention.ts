import { Connection } from '@temporalio/client';
import { msToTs, optionalTsToMs } from '@temporalio/common/lib/time';
import { parseDuration } from '../config/duration';

/** Temporal keeps a namespace's closed workflows at least a day. */
const MIN_RETENTION_MS = 86_400_000;

/**
 * How long the namespace keeps a closed workflow's history (and its row in the Web UI's lists)
 * before Temporal deletes it: TEMPORAL_NAMESPACE_RETENTION, 7 days unless set. The service's own
 * records (runs, messages, tool calls, deliveries) are in its database and do not depend on it.
 */
export function namespaceRetentionMs(env: NodeJS.ProcessEnv = process.env): number {
  const value = env.TEMPORAL_NAMESPACE_RETENTION || '7d';
  const ms = parseDuration(value);
  if (ms === undefined || ms < MIN_RETENTION_MS)
    throw new Error(
      `TEMPORAL_NAMESPACE_RETENTION must be a duration of at least 1d, such as 7d, not "${value}"`,
    );
  return ms;
}

/**
 * Sets the namespace's retention to `retentionMs` when it is another: the stack does it for the
 * Temporal it starts (the dev server creates its namespace with a retention of its own choosing,
 * and a namespace registered by an earlier start keeps the retention it was registered with).
 */
export async function applyNamespaceRetention(
  address: string,
  namespace: string,
  retentionMs: number,
): Promise<{ fromMs: number | undefined; changed: boolean }> {
  const connection = await Connection.connect({ address });
  try {
    const described = await connection.workflowService.describeNamespace({ namespace });
    const fromMs = optionalTsToMs(described.config?.workflowExecutionRetentionTtl);
    if (fromMs === retentionMs) return { fromMs, changed: false };
    await connection.workflowService.updateNamespace({
      namespace,
      config: { workflowExecutionRetentionTtl: msToTs(retentionMs) },
    });
    return { fromMs, changed: true };
  } finally {
    await connection.close();
  }
}
