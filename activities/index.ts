import type { WorkerDeps } from '../apps/worker/deps';
import { modelToolSpecs } from '../core/tools/registry';
import { createAgentActivities } from './agent';
import { createToolsActivities } from './tools';
import { createWebhooksActivities } from './webhooks';

/** Every activity group, built once from the worker's dependencies. */
export function createActivities(deps: WorkerDeps) {
  return {
    ...createAgentActivities({ ...deps, toolSpecs: modelToolSpecs() }),
    ...createToolsActivities(deps),
    ...createWebhooksActivities(deps),
  };
}
