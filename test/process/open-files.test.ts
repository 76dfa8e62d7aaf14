import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { openFileLimit, streamCapacity } from '../../core/process/open-files';

/** The open-file limit a gateway reports at start and sizes its open streams by. */
describe('open-file limit', () => {
  it('reads the limit the process was given, its soft limit raised to the hard one by Node', () => {
    const hard = spawnSync('sh', ['-c', 'ulimit -Hn'], { encoding: 'utf8' }).stdout.trim();
    const limit = openFileLimit();
    const expected = hard === 'unlimited' ? Number.POSITIVE_INFINITY : Number(hard);
    assert.deepEqual(limit, { soft: expected, hard: expected });
    assert.equal(openFileLimit('/nonexistent/limits'), undefined);
  });

  it('keeps 1024 open files (at most half) for everything but streams', () => {
    assert.equal(streamCapacity(20_000), 18_976);
    assert.equal(streamCapacity(1024), 512);
    assert.equal(streamCapacity(1), 1);
    assert.equal(streamCapacity(Number.POSITIVE_INFINITY), Number.POSITIVE_INFINITY);
  });
});
