import assert from 'node:assert/strict';
import { bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';
import { workflowObservation } from '../../apps/worker/worker';

describe('the workflow bundle', function () {
  this.timeout(120_000);

  it('evaluates the OpenTelemetry semantic conventions once per worker, not once per execution', async () => {
    const { bundlerOptions, interceptors } = workflowObservation(undefined);
    const { code } = await bundleWorkflowCode({
      workflowsPath: require.resolve('../../workflows'),
      workflowInterceptorModules: interceptors?.workflowModules ?? [],
      ...bundlerOptions,
      logger: new DefaultLogger('WARN'),
    });
    // What the reusable V8 context runs before any execution exists, into the shared module cache.
    const preload = /function preloadModules\(\) \{([^}]*)\}/.exec(code)?.[1] ?? '';
    const id = /"(\.\/node_modules\/@opentelemetry\/semantic-conventions\/[^"]+)"/.exec(preload)?.[1];
    assert.ok(id, `preloadModules() loads nothing:${preload}`);
    // The very module the tracing code imports (its definition, the preload, at least one import).
    assert.ok(code.split(`"${id}"`).length - 1 >= 3, `${id} is not the module the tracing code imports`);
  });
});
