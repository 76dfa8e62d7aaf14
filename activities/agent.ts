import type { WorkerDeps } from '../apps/worker/deps';

export function createAgentActivities(_deps: WorkerDeps) {
  return {};
}

export type AgentActivities = ReturnType<typeof createAgentActivities>;
