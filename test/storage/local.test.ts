import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createStorage } from '../../core/storage';
import { testStack } from '../../testkit/stack';
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
});
