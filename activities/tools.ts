import type { WorkerDeps } from '../apps/worker/deps';

export function createToolsActivities(_deps: WorkerDeps) {
  return {};
}

export type ToolsActivities = ReturnType<typeof createToolsActivities>;
