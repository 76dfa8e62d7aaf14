import assert from 'node:assert/strict';
import { createConfig, lintFromString } from '@redocly/openapi-core';
import { startGateway, type TestGateway } from '../../testkit/gateway';

/**
 * The served document passes a standard linter's recommended rules (Redocly's, the rules its CLI
 * runs by default) with no error, so generators (the TypeScript client's among them) take it whole.
 */
describe('OpenAPI document, linted', function () {
  this.timeout(60_000);
  let gateway: TestGateway;
  before(async () => {
    gateway = await startGateway();
  });
  after(async () => {
    await gateway.close();
  });

  it("has no error under Redocly's recommended rules", async () => {
    const source = await (await fetch(`${gateway.url}/api/v1/openapi.json`)).text();
    const config = await createConfig({ extends: ['recommended'] });
    const problems = await lintFromString({ source, absoluteRef: 'openapi.json', config });
    const errors = problems
      .filter((p) => p.severity === 'error')
      .map((p) => `${p.ruleId} at ${p.location[0]?.pointer ?? '?'}: ${p.message}`);
    assert.deepEqual(errors, []);
  });

  it('documents the webhooks with their signature, 429 with its headers, one ToolResult, and only real operations', async () => {
    const doc = (await (await fetch(`${gateway.url}/api/v1/openapi.json`)).json()) as {
      webhooks: Record<string, { post: { parameters: { name: string; in: string }[] } }>;
      paths: Record<string, Record<string, { responses: Record<string, { headers?: object }> }>>;
      components: { schemas: Record<string, unknown> };
    };
    assert.deepEqual(Object.keys(doc.webhooks).sort(), [
      'agent.completed',
      'agent.failed',
      'agent.started',
      'tool.completed',
    ]);
    for (const webhook of Object.values(doc.webhooks))
      assert.deepEqual(
        webhook.post.parameters.filter((p) => p.in === 'header').map((p) => p.name),
        ['x-svc-signature', 'x-svc-timestamp', 'x-svc-event', 'x-svc-delivery-id'],
      );
    const send = doc.paths['/api/v1/completions']?.post;
    assert.deepEqual(Object.keys(send?.responses['429']?.headers ?? {}), [
      'retry-after',
      'ratelimit-limit',
      'ratelimit-remaining',
      'ratelimit-reset',
    ]);
    assert.deepEqual(
      Object.keys(doc.components.schemas).filter((name) => /ToolResult/i.test(name)),
      ['ToolResult'],
    );
    for (const [path, methods] of Object.entries(doc.paths))
      for (const [method, operation] of Object.entries(methods))
        assert.ok(
          Object.keys(operation.responses).some((status) => status.startsWith('2')),
          `${method} ${path} answers something besides errors`,
        );
  });
});
