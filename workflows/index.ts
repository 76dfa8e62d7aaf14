// The worker bundles this file: every workflow the task queue serves is exported here.
export * from './agent.workflow';
export * from './tool-call.workflow';
export * from './webhook-delivery.workflow';
