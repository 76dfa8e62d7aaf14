import { Client, Connection, type ConnectionLike } from '@temporalio/client';
import { OpenTelemetryWorkflowClientInterceptor } from '@temporalio/interceptors-opentelemetry';

export interface TemporalClientHandle {
  client: Client;
  connection: Connection;
}

/**
 * A lazy connection: the gateway starts, and admits turns, while Temporal is unreachable; the
 * dispatcher starts those turns once it is back. Every start, signal and cancel carries the trace
 * in progress to the workflow (its span is a no-op while tracing is off).
 */
export function createTemporalClient(options: { address: string; namespace: string }): TemporalClientHandle {
  const connection = Connection.lazy({ address: options.address, connectTimeout: 3_000 });
  return {
    connection,
    client: new Client({
      connection,
      namespace: options.namespace,
      interceptors: { workflow: [new OpenTelemetryWorkflowClientInterceptor()] },
    }),
  };
}

/**
 * A client over the worker's NativeConnection: its activities' starts need no second connection,
 * and the workflows they start can start eagerly (on this very worker).
 */
export function createWorkerTemporalClient(connection: ConnectionLike, namespace: string): Client {
  return new Client({
    connection,
    namespace,
    interceptors: { workflow: [new OpenTelemetryWorkflowClientInterceptor()] },
  });
}

/** True when the Temporal frontend answers within `timeoutMs`, over a client's or a worker's connection. */
export async function temporalReachable(
  connection: Pick<Connection, 'withDeadline' | 'workflowService'>,
  timeoutMs: number,
): Promise<boolean> {
  try {
    await connection.withDeadline(Date.now() + timeoutMs, () => connection.workflowService.getSystemInfo({}));
    return true;
  } catch {
    return false;
  }
}
