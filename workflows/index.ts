// The worker bundles this file: every workflow the task queue serves is exported here.
export {};
