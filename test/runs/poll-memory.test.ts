import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createNotificationHub, type NotificationHub } from '../../core/db/notification-hub';
import { createLogger } from '../../core/logging/logger';
import { createPollMemory } from '../../operations/runs/poll-memory';
import { testStack } from '../../testkit/stack';
import { waitFor } from '../support/wait';

/**
 * What a gateway keeps of the runs it answered is bounded: a changed run's answer is let go when
 * its notification arrives, and past its cap a read is answered without being remembered.
 */
describe('poll memory', () => {
  let hub: NotificationHub;
  const notify = async (runId: string) =>
    (await testStack()).db.pool.query(`SELECT pg_notify('run_events', $1)`, [runId]);

  before(async () => {
    const stack = await testStack();
    hub = createNotificationHub({
      url: stack.config().DATABASE_URL,
      logger: createLogger({ level: 'silent', name: 'poll-memory-test' }),
      channels: ['run_events'],
    });
    const stop = hub.subscribe('run_events', randomUUID(), () => undefined);
    await waitFor(async () => (hub.listening() ? true : undefined), { what: 'the hub listening' });
    stop();
  });
  after(() => hub.close());

  it('holds at most its cap, and frees a place as soon as a run it holds changes', async () => {
    const memory = createPollMemory(hub, 2);
    const userId = randomUUID();
    const chatId = randomUUID();
    const scopes = [randomUUID(), randomUUID(), randomUUID()].map((runId) => ({ userId, chatId, runId }));
    const [a, b, c] = scopes as [(typeof scopes)[0], (typeof scopes)[0], (typeof scopes)[0]];
    let reads = 0;
    const read = (scope: typeof a) =>
      memory.read(scope, async () => ({ etag: `W/"${scope.runId}:${++reads}"` }));

    const first = await read(a);
    await read(b);
    assert.equal(memory.unchanged(a), first.etag);
    assert.ok(memory.unchanged(b));
    // Full: C is answered, and read again the next time, while A and B are still given from memory.
    await read(c);
    assert.equal(memory.unchanged(c), undefined);
    assert.equal(await read(a), first);

    // Subscribed after the memory, so woken after it: once this runs, the memory has been told.
    const told = new Promise<void>((resolve) => {
      const stop = hub.subscribe('run_events', a.runId, () => {
        stop();
        resolve();
      });
    });
    await notify(a.runId);
    await told;
    const readsBefore = reads;
    const third = await read(c);
    assert.equal(reads, readsBefore + 1);
    assert.equal(memory.unchanged(c), third.etag, 'C takes the place A left');
    assert.equal(await read(c), third);
    assert.equal(reads, readsBefore + 1, 'C answered from memory');
  });
});
