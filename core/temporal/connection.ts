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

/** A client on a worker's own connection (what a worker's activities start workflows with). */
export interface WorkerTemporalClient {
  client: Client;
  /**
   * Workflows it starts may ask for an eager start: the server hands their first workflow task to
   * this very worker in the start's answer, skipping the task queue's round trip.
   */
  eagerStart: true;
}

/** A client over the worker's NativeConnection, so the workflows its activities start can start eagerly. */
export function createWorkerTemporalClient(
  connection: ConnectionLike,
  namespace: string,
): WorkerTemporalClient {
  return {
    client: new Client({
      connection,
      namespace,
      interceptors: { workflow: [new OpenTelemetryWorkflowClientInterceptor()] },
    }),
    eagerStart: true,
  };
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
