import { Client, Connection } from '@temporalio/client';

export interface TemporalClientHandle {
  client: Client;
  connection: Connection;
}

/**
 * A lazy connection: the gateway starts, and admits turns, while Temporal is unreachable; the
 * dispatcher starts those turns once it is back.
 */
export function createTemporalClient(options: { address: string; namespace: string }): TemporalClientHandle {
  const connection = Connection.lazy({ address: options.address, connectTimeout: 3_000 });
  return { connection, client: new Client({ connection, namespace: options.namespace }) };
}

/** True when the Temporal frontend answers within `timeoutMs`. */
export async function temporalReachable(connection: Connection, timeoutMs: number): Promise<boolean> {
  try {
    await connection.withDeadline(Date.now() + timeoutMs, () => connection.workflowService.getSystemInfo({}));
    return true;
  } catch {
    return false;
  }
}
