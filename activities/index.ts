import { modelToolSpecs } from '../core/tools/registry';
import { createAgentActivities } from './agent';
import type { ActivityDeps } from './deps';
import { createToolsActivities } from './tools';
import { createWebhooksActivities } from './webhooks';

export type { ActivityDeps } from './deps';

/** Every activity group, built once from the worker's dependencies. */
export function createActivities(deps: ActivityDeps) {
  const agentDeps = { ...deps, toolSpecs: modelToolSpecs() };
  return {
    ...createAgentActivities(agentDeps),
    ...createToolsActivities(deps),
    ...createWebhooksActivities(deps),
  };
}
