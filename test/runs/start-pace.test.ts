import assert from 'node:assert/strict';
import { createStartPace } from '../../operations/runs/start-pace';

describe('start pace', () => {
  const clocked = () => {
    let t = 1_000_000;
    const pace = createStartPace(() => t);
    return { pace, pass: (ms: number) => (t += ms) };
  };

  it('waits while it has too little evidence, whatever the evidence says', () => {
    const { pace } = clocked();
    for (let i = 0; i < 3; i++) {
      pace.record(false);
      assert.equal(pace.worthWaiting(), true, `after ${i + 1} misses`);
    }
    pace.record(false);
    assert.equal(pace.worthWaiting(), false, 'four misses in a row');
  });

  it('waits while at least a quarter of the recent starts answered in time', () => {
    const { pace } = clocked();
    for (let i = 0; i < 6; i++) pace.record(false);
    pace.record(true);
    assert.equal(pace.worthWaiting(), false, '1 of 7');
    pace.record(true);
    assert.equal(pace.worthWaiting(), true, '2 of 8');
  });

  it('weighs the last twenty outcomes only', () => {
    const { pace } = clocked();
    for (let i = 0; i < 20; i++) pace.record(true);
    for (let i = 0; i < 15; i++) pace.record(false);
    assert.equal(pace.worthWaiting(), true, '5 hits among the last 20');
    pace.record(false);
    assert.equal(pace.worthWaiting(), false, '4 hits among the last 20');
  });

  it('forgets outcomes older than thirty seconds, and waits again once they are gone', () => {
    const { pace, pass } = clocked();
    for (let i = 0; i < 10; i++) pace.record(false);
    assert.equal(pace.worthWaiting(), false);
    pass(29_999);
    assert.equal(pace.worthWaiting(), false);
    pass(1);
    assert.equal(pace.worthWaiting(), true);
  });
});
