import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { Resource } from '@opentelemetry/resources';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { Worker } from '@temporalio/worker';
import { workflowObservation } from '../../apps/worker/worker';
import type { Tracing } from '../../core/telemetry/tracing';

/** Every path a run, a tool call and a delivery can take: each needs a history of today's code. */
const PATHS = [
  'text-turn',
  'tool-turn',
  'crop-turn',
  'plan-approved',
  'plan-rejected',
  'plan-expired',
  'cancelled-mid-step',
  'cancelled-at-once',
  'cancelled-before-start',
  'stopped-mid-step',
  'failed',
  'queued-turn',
  'interrupted',
  'max-steps',
  'budget-exceeded',
  'tool-call',
  'crop-call',
  'delivered',
  'delivery-retried',
  'delivery-gave-up',
];

/**
 * Replays recorded workflow histories against today's workflow code: a change that would break a
 * run in flight (non-determinism) fails here, before it reaches a deployment. Histories are
 * replayed as the worker runs them: with the log interceptor, and again with tracing's.
 */
describe('workflow replay', () => {
  const dir = path.join(__dirname, 'histories');
  const load = async () => {
    const files = (await readdir(dir)).filter((f) => f.endsWith('.json')).sort();
    return Promise.all(
      files.map(async (file) => ({
        workflowId: file,
        history: historyFromJSON(JSON.parse(await readFile(path.join(dir, file), 'utf8'))),
      })),
    );
  };
  const replay = async (tracing: Tracing | undefined) => {
    const histories = await load();
    const results = [];
    for await (const result of Worker.runReplayHistories(
      { workflowsPath: require.resolve('../../workflows'), ...workflowObservation(tracing) },
      histories,
    )) {
      results.push(result);
    }
    assert.equal(results.length, histories.length);
    for (const result of results)
      assert.equal(result.error, undefined, `${result.workflowId}: ${String(result.error)}`);
  };

  it('holds a history of every path, recorded by the current code or an older one', async () => {
    const files = await readdir(dir);
    for (const name of PATHS)
      assert.ok(
        files.some((f) => f.endsWith(`-${name}.json`)),
        `no recorded history of ${name} (test/replay/record-histories.ts)`,
      );
  });

  it("holds the chat queue's handover: the head's execution continued as new into the next turn", async () => {
    for (const name of ['queued-turn', 'interrupted']) {
      const file = (await readdir(dir)).find((f) => f.endsWith(`-${name}.json`));
      const { events } = JSON.parse(await readFile(path.join(dir, file ?? ''), 'utf8')) as {
        events: { eventType: string }[];
      };
      assert.equal(events.at(-1)?.eventType, 'EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW', name);
    }
  });

  it('replays every recorded history without a non-determinism error', async () => {
    await replay(undefined);
  });

  it('replays them with the OpenTelemetry interceptors too (tracing on)', async () => {
    const exporter = new InMemorySpanExporter();
    await replay({
      resource: new Resource({ 'service.name': 'replay' }),
      processor: new SimpleSpanProcessor(exporter),
      shutdown: async () => undefined,
    });
  });
});
