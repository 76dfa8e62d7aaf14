import { createHash, randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream, type BigIntStats } from 'node:fs';
import { mkdir, open, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Config } from '../config/config';
import { faultPoint } from '../process/fault';
import { ObjectNotFoundError, assertValidKey } from './keys';
import { signedFileUrl } from './signing';
import type { ByteRange, ObjectInfo, ObjectStorage, PutOptions } from './storage';

const PROJECT_ROOT = path.resolve(__dirname, '../..');

interface Meta {
  contentType: string;
}

/**
 * An object's metadata from its meta file and its stat. The ETag is its length and modification
 * time (to the nanosecond): every write renames a new file into place, so it changes with the bytes.
 */
function describe(meta: string, info: BigIntStats): ObjectInfo {
  const { contentType } = JSON.parse(meta) as Meta;
  return {
    contentType,
    size: Number(info.size),
    etag: `"${info.size.toString(16)}-${info.mtimeNs.toString(16)}"`,
    lastModified: new Date(Number(info.mtimeMs)),
  };
}

function isMissing(err: unknown): boolean {
  return (
    (err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'ENOTDIR'
  );
}

/**
 * Objects on local disk. Bytes live under `objects/`, their content type under `meta/` (separate
 * trees, so no key can collide with another key's metadata), and every write lands in `tmp/`
 * first and is renamed into place, so a reader never sees a half-written object.
 */
export function createLocalStorage(config: Config): ObjectStorage {
  const root = path.resolve(PROJECT_ROOT, config.STORAGE_LOCAL_DIR);
  const objectsDir = path.join(root, 'objects');
  const tmpDir = path.join(root, 'tmp');

  const locate = (key: string) => {
    assertValidKey(key);
    const objectPath = path.join(objectsDir, ...key.split('/'));
    // Defence in depth: assertValidKey already rules out every way out of the root.
    if (!objectPath.startsWith(objectsDir + path.sep)) throw new Error(`invalid storage key ${key}`);
    return { objectPath, metaPath: path.join(root, 'meta', ...key.split('/')) + '.json' };
  };

  return {
    driver: 'local',

    async put(key: string, body: Buffer | Readable, options: PutOptions) {
      const { objectPath, metaPath } = locate(key);
      await mkdir(tmpDir, { recursive: true });
      // Temporary files are named after their key: a put cut short between writing and renaming
      // (its process killed) leaves its files behind, and the retry of that put clears them.
      const stem = `${createHash('sha256').update(key).digest('hex')}.`;
      for (const leftover of (await readdir(tmpDir)).filter((f) => f.startsWith(stem))) {
        await rm(path.join(tmpDir, leftover), { force: true });
      }
      const tmpObject = path.join(tmpDir, stem + randomUUID());
      const tmpMeta = `${tmpObject}.json`;
      const meta: Meta = { contentType: options.contentType };
      let renamed = false;
      try {
        // Independent file operations at once: each is a trip through libuv's thread pool, and a
        // tool's output waits on them (a crop's is stored in a few ms rather than six).
        // All settled before a failure is thrown, so no write lands after the cleanup below.
        const written = await Promise.allSettled([
          Buffer.isBuffer(body) ? writeFile(tmpObject, body) : pipeline(body, createWriteStream(tmpObject)),
          writeFile(tmpMeta, JSON.stringify(meta)),
          mkdir(path.dirname(objectPath), { recursive: true }),
          mkdir(path.dirname(metaPath), { recursive: true }),
        ]);
        const failed = written.find((r) => r.status === 'rejected');
        if (failed) throw failed.reason;
        await faultPoint(config, 'storage-put', { key });
        await rename(tmpMeta, metaPath);
        await rename(tmpObject, objectPath);
        renamed = true;
        return { size: Buffer.isBuffer(body) ? body.length : (await stat(objectPath)).size };
      } finally {
        if (!renamed) {
          await rm(tmpObject, { force: true });
          await rm(tmpMeta, { force: true });
        }
      }
    },

    async stat(key: string) {
      const { objectPath, metaPath } = locate(key);
      try {
        const [meta, info] = await Promise.all([
          readFile(metaPath, 'utf8'),
          stat(objectPath, { bigint: true }),
        ]);
        return describe(meta, info);
      } catch (err) {
        if (isMissing(err)) throw new ObjectNotFoundError(key);
        throw err;
      }
    },

    async get(key: string, options: { range?: ByteRange } = {}) {
      const { objectPath, metaPath } = locate(key);
      try {
        // Open before stat and read through the handle, so a concurrent delete cannot split them.
        const handle = await open(objectPath, 'r');
        try {
          const [meta, info] = await Promise.all([readFile(metaPath, 'utf8'), handle.stat({ bigint: true })]);
          const body = createReadStream('', { fd: handle, ...options.range });
          return { ...describe(meta, info), body };
        } catch (err) {
          await handle.close();
          throw err;
        }
      } catch (err) {
        if (isMissing(err)) throw new ObjectNotFoundError(key);
        throw err;
      }
    },

    async delete(key: string) {
      const { objectPath, metaPath } = locate(key);
      await rm(objectPath, { force: true });
      await rm(metaPath, { force: true });
    },

    url: (key: string) => {
      assertValidKey(key);
      return signedFileUrl(config, key);
    },
  };
}
