/**
 * Preloaded (plain JavaScript: --require runs before tsx's loader) into the gateway and worker
 * processes the bench starts, never in production: on the bench's 'gc' message it runs a full
 * collection and answers 'gc-done', so the resident memory read next is not inflated by garbage
 * that has simply not been collected yet. The answer carries the live heap after it: resident memory
 * is a high-water mark, the heap says whether what grew is still held.
 */
process.on('message', (message) => {
  if (message !== 'gc') return;
  globalThis.gc?.();
  process.send?.({ gcDone: true, heapUsedBytes: process.memoryUsage().heapUsed });
});
