import { modelToolSpecs } from '../core/tools/registry';
import { createAgentActivities } from './agent';
import { createAgentV1Activities } from './agent-v1';
import type { FirstAttempts } from '../workflows/client';
import type { ActivityDeps } from './deps';
import { createToolsActivities } from './tools';
import { createWebhooksActivities } from './webhooks';

export type { ActivityDeps } from './deps';
export { createFirstAttempts } from './webhooks';
export { createToolFirstAttempts } from './tools';

/**
 * Every activity group, built once from the worker's dependencies, with the FirstAttempts through
 * which its steps post their deliveries' first attempts (createWorker builds and waits for them).
 */
export function createActivities(deps: ActivityDeps & { firstAttempts: FirstAttempts }) {
  const agentDeps = { ...deps, toolSpecs: modelToolSpecs() };
  return {
    ...createAgentActivities(agentDeps),
    ...createAgentV1Activities(agentDeps),
    ...createToolsActivities(deps),
    ...createWebhooksActivities(deps),
  };
}
