import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import type { Config } from '../../core/config/config';
import type { Database } from '../../core/db/client';
import { createStorage } from '../../core/storage';
import type { ObjectStorage } from '../../core/storage/storage';
import { discardObjects, putObjects, storeAttachments } from '../../core/uploads/attachments';
import { insertAttachments } from '../../core/uploads/store';
import type { ReceivedFile } from '../../core/uploads/receive';
import { createTestUser } from '../../testkit/users';
import { testStack } from '../../testkit/stack';

describe('storing attachments', () => {
  let dir: string;
  let storage: ObjectStorage;
  let db: Database;
  let config: Config;
  let files: ReceivedFile[];
  const deps = (store = storage) => ({ storage: store, db, config });

  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'svc-test-attachments-'));
    const stack = await testStack();
    db = stack.db;
    config = stack.config({ STORAGE_LOCAL_DIR: path.join(dir, 'store') });
    storage = createStorage(config);
    const png = await sharp({ create: { width: 2, height: 2, channels: 3, background: '#000' } })
      .png()
      .toBuffer();
    files = await Promise.all(
      ['a.png', 'b.png'].map(async (filename) => {
        const file = path.join(dir, filename);
        await writeFile(file, png);
        return { path: file, filename, mimeType: 'image/png', size: png.length };
      }),
    );
  });
  after(() => rm(dir, { recursive: true, force: true }));

  const storedObjects = async () =>
    (
      await readdir(path.join(dir, 'store', 'objects'), { recursive: true, withFileTypes: true }).catch(
        () => [],
      )
    ).filter((e) => e.isFile()).length;
  const storedBytes = async (userId: string) =>
    Number((await db.prisma.user.findUniqueOrThrow({ where: { id: userId } })).storedBytes);

  it('stores objects and ready rows under attachments/<userId>/', async () => {
    const user = await createTestUser();
    const rows = await storeAttachments(deps(), { userId: user.userId, files });
    assert.equal(rows.length, 2);
    for (const row of rows) {
      assert.match(row.storageKey, new RegExp(`^attachments/${user.userId}/[0-9a-f-]{36}$`));
      const object = await storage.get(row.storageKey);
      object.body.destroy();
      assert.equal(object.contentType, 'image/png');
    }
    const count = await db.prisma.attachment.count({ where: { userId: user.userId, status: 'ready' } });
    assert.equal(count, 2);
  });

  it('deletes the stored objects, and gives their room in the quota back, when the insert fails', async () => {
    const user = await createTestUser();
    const before = await storedObjects();
    // No such chat: the foreign key refuses the rows after the objects were put.
    await assert.rejects(
      storeAttachments(deps(), { userId: user.userId, files, chatId: randomUUID() }),
      /foreign key/i,
    );
    assert.equal(await storedObjects(), before);
    assert.equal(await storedBytes(user.userId), 0);
  });

  it('deletes the objects already put when a later put fails', async () => {
    const before = await storedObjects();
    let puts = 0;
    const flaky: ObjectStorage = {
      ...storage,
      put: (key, body, options) =>
        ++puts === 2 ? Promise.reject(new Error('storage is down')) : storage.put(key, body, options),
    };
    const user = await createTestUser();
    await assert.rejects(putObjects(deps(flaky), user.userId, files), /storage is down/);
    assert.equal(await storedObjects(), before);
    assert.equal(await storedBytes(user.userId), 0);
  });

  it('lets a caller insert the rows in its own transaction and discard the objects when it fails', async () => {
    const user = await createTestUser();
    const before = await storedObjects();
    const rows = await putObjects(deps(), user.userId, files);
    assert.equal(await storedObjects(), before + 2);
    await assert.rejects(
      db.prisma
        .$transaction(async (tx) => {
          await insertAttachments(tx, rows);
          throw new Error('a later step of the caller fails');
        })
        .catch(async (err: unknown) => {
          await discardObjects(deps(), rows);
          throw err;
        }),
      /a later step/,
    );
    assert.equal(await db.prisma.attachment.count({ where: { userId: user.userId } }), 0);
    assert.equal(await storedObjects(), before);
  });
});
