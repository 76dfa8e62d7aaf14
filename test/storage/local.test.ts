import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createStorage } from '../../core/storage';
import { testStack } from '../../testkit/stack';
import { waitFor } from '../support/wait';
import { storageContract } from './contract';

storageContract('local', async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'svc-test-files-'));
  return {
    env: { STORAGE_DRIVER: 'local', STORAGE_LOCAL_DIR: dir },
    teardown: () => rm(dir, { recursive: true, force: true }),
  };
});

describe('local storage', () => {
  it('leaves no temp file behind after writes', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'svc-test-files-'));
    try {
      const storage = createStorage((await testStack()).config({ STORAGE_LOCAL_DIR: dir }));
      await storage.put('a/b', Buffer.from('x'), { contentType: 'image/png' });
      assert.deepEqual(await readdir(path.join(dir, 'tmp')), []);
      assert.deepEqual(await readdir(path.join(dir, 'objects', 'a')), ['b']);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("clears what a put cut short left in tmp when that key is put again, and keeps others' files", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'svc-test-files-'));
    try {
      const stack = await testStack();
      // A put held at its fault point, between writing its files and renaming them, stands for a
      // process killed there: its files stay in tmp.
      const held = createStorage(
        stack.config({ STORAGE_LOCAL_DIR: dir, FAULT_PAUSE_AT: 'storage-put', FAULT_PAUSE_FOR: '10m' }),
      );
      void held
        .put('tools/u/call/out.png', Buffer.from('first'), { contentType: 'image/png' })
        .catch(() => undefined);
      void held
        .put('tools/u/other/out.png', Buffer.from('other'), { contentType: 'image/png' })
        .catch(() => undefined);
      const tmp = path.join(dir, 'tmp');
      await waitFor(async () => ((await readdir(tmp).catch(() => [])).length === 4 ? true : undefined), {
        what: 'both held puts to have written their files',
      });
      const left = await readdir(tmp);

      const storage = createStorage(stack.config({ STORAGE_LOCAL_DIR: dir }));
      await storage.put('tools/u/call/out.png', Buffer.from('retried'), { contentType: 'image/png' });
      const after = await readdir(tmp);
      assert.equal(after.length, 2, "only the other key's files are left");
      assert.ok(after.every((f) => left.includes(f)));
      const object = await storage.get('tools/u/call/out.png');
      object.body.destroy();
      assert.equal(object.size, 'retried'.length);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
