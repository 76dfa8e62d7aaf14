import type { WorkerDeps } from '../apps/worker/deps';

/** Every activity group, built once from the worker's dependencies. */
export function createActivities(_deps: WorkerDeps) {
  return {};
}
