import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { Worker } from '@temporalio/worker';

/**
 * Replays recorded agent workflow histories against today's workflow code: a change that would
 * break a run in flight (non-determinism) fails here, before it reaches a deployment.
 */
describe('workflow replay', () => {
  it('replays every recorded history without a non-determinism error', async () => {
    const dir = path.join(__dirname, 'histories');
    const files = (await readdir(dir)).filter((f) => f.endsWith('.json')).sort();
    assert.ok(files.length >= 2, 'recorded histories are present');
    const histories = await Promise.all(
      files.map(async (file) => ({
        workflowId: file,
        history: historyFromJSON(JSON.parse(await readFile(path.join(dir, file), 'utf8'))),
      })),
    );
    const results = [];
    for await (const result of Worker.runReplayHistories(
      { workflowsPath: require.resolve('../../workflows') },
      histories,
    )) {
      results.push(result);
    }
    assert.equal(results.length, files.length);
    for (const result of results)
      assert.equal(result.error, undefined, `${result.workflowId}: ${String(result.error)}`);
  });
});
