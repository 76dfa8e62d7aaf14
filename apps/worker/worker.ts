import { type NativeConnection, Worker } from '@temporalio/worker';
import { createActivities } from '../../activities';
import type { ActivityDeps } from '../../activities/deps';

export interface WorkerOptions {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  /** How long a stopping worker lets its activities run before it cancels them (ms); default 0. */
  shutdownGraceMs?: number;
}

/** Builds the worker from its dependencies; main.ts and the tests both call this. */
export async function createWorker(deps: ActivityDeps, options: WorkerOptions): Promise<Worker> {
  return Worker.create({
    connection: options.connection,
    namespace: options.namespace,
    taskQueue: options.taskQueue,
    workflowsPath: require.resolve('../../workflows'),
    activities: createActivities(deps),
    // Cancellation reaches an activity with its next heartbeat: send them often enough to stop promptly.
    maxHeartbeatThrottleInterval: '2 seconds',
    ...(options.shutdownGraceMs === undefined
      ? {}
      : {
          shutdownGraceTime: options.shutdownGraceMs,
          // Cancelled activities get a few seconds to report; past that the worker gives up on them.
          shutdownForceTime: options.shutdownGraceMs + 5_000,
        }),
  });
}
