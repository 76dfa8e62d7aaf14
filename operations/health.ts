import { temporal } from '@temporalio/proto';
import { databaseReachable } from '../core/db/client';
import { taskQueueLastPollAge, taskQueuePollers } from '../core/metrics/registry';
import { temporalReachable } from '../core/temporal/connection';
import type { OperationDeps } from './deps';

const READINESS_TIMEOUT_MS = 2_000;
/** /readyz is public: one check a second at most, whoever asks and however often. */
const READINESS_CACHE_MS = 1_000;

export interface Readiness {
  status: 'ready' | 'unavailable';
  database: 'up' | 'down';
  temporal: 'up' | 'down';
}

export interface Poller {
  identity: string;
  lastPollAt: string | null;
}

/** Who polls the service's task queue, as Temporal's DescribeTaskQueue tells it. */
export interface TaskQueuePollers {
  name: string;
  workflowPollers: Poller[];
  activityPollers: Poller[];
}

/** Readiness, and what an operator reads besides: the pollers of the task queue. */
export interface HealthDetails extends Readiness {
  /** Null when Temporal did not answer. */
  taskQueue: TaskQueuePollers | null;
}

const TASK_TYPES = {
  workflow: temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
  activity: temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY,
} as const;

/** Whether this process can serve: PostgreSQL and Temporal both answer. */
export function createHealthOperations(deps: OperationDeps) {
  const { connection } = deps.temporal;
  const name = deps.config.TEMPORAL_TASK_QUEUE;

  async function pollersOf(type: keyof typeof TASK_TYPES): Promise<Poller[]> {
    const answer = await connection.withDeadline(Date.now() + READINESS_TIMEOUT_MS, () =>
      connection.workflowService.describeTaskQueue({
        namespace: deps.config.TEMPORAL_NAMESPACE,
        taskQueue: { name, kind: temporal.api.enums.v1.TaskQueueKind.TASK_QUEUE_KIND_NORMAL },
        taskQueueType: TASK_TYPES[type],
      }),
    );
    return (answer.pollers ?? []).map((p) => ({
      identity: p.identity ?? '',
      lastPollAt: p.lastAccessTime?.seconds
        ? new Date(
            Number(p.lastAccessTime.seconds) * 1000 + Math.floor((p.lastAccessTime.nanos ?? 0) / 1e6),
          ).toISOString()
        : null,
    }));
  }

  /** Sets the poller gauges from one look at the task queue; none when Temporal did not answer. */
  function record(queue: TaskQueuePollers | null): void {
    taskQueuePollers.reset();
    taskQueueLastPollAge.reset();
    if (!queue) return;
    for (const [type, pollers] of [
      ['workflow', queue.workflowPollers],
      ['activity', queue.activityPollers],
    ] as const) {
      taskQueuePollers.set({ task_queue: name, type }, pollers.length);
      const last = Math.max(...pollers.map((p) => (p.lastPollAt ? Date.parse(p.lastPollAt) : 0)));
      if (last > 0)
        taskQueueLastPollAge.set({ task_queue: name, type }, Math.max(0, (Date.now() - last) / 1000));
    }
  }

  async function checkReadiness(): Promise<Readiness> {
    const [database, temporalUp] = await Promise.all([
      databaseReachable(deps.db.pool, READINESS_TIMEOUT_MS),
      temporalReachable(connection, READINESS_TIMEOUT_MS),
    ]);
    return {
      status: database && temporalUp ? 'ready' : 'unavailable',
      database: database ? 'up' : 'down',
      temporal: temporalUp ? 'up' : 'down',
    };
  }

  // Callers during a check share it; its answer then serves for READINESS_CACHE_MS.
  let cached: { answer: Promise<Readiness>; until: number } | undefined;

  const operations = {
    readiness(): Promise<Readiness> {
      if (cached && Date.now() < cached.until) return cached.answer;
      const entry = { answer: checkReadiness(), until: Number.POSITIVE_INFINITY };
      cached = entry;
      const expire = () => {
        entry.until = Date.now() + READINESS_CACHE_MS;
      };
      entry.answer.then(expire, expire);
      return entry.answer;
    },

    /**
     * The task queue's pollers (sends are admitted without any: readiness does not depend on
     * workers, so this is where their absence shows), recorded in the poller gauges as well.
     */
    async taskQueue(): Promise<TaskQueuePollers | null> {
      const queue = await Promise.all([pollersOf('workflow'), pollersOf('activity')]).then(
        ([workflowPollers, activityPollers]) => ({ name, workflowPollers, activityPollers }),
        () => null,
      );
      record(queue);
      return queue;
    },

    async details(): Promise<HealthDetails> {
      const [readiness, taskQueue] = await Promise.all([operations.readiness(), operations.taskQueue()]);
      return { ...readiness, taskQueue };
    },
  };
  return operations;
}

export type HealthOperations = ReturnType<typeof createHealthOperations>;
