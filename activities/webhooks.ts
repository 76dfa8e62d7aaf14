import type { WorkerDeps } from '../apps/worker/deps';

export function createWebhooksActivities(_deps: WorkerDeps) {
  return {};
}

export type WebhooksActivities = ReturnType<typeof createWebhooksActivities>;
