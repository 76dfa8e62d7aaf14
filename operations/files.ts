import { NotFoundError } from '../core/errors/app-error';
import { ObjectNotFoundError, assertValidKey } from '../core/storage/keys';
import { verifyKeySignature } from '../core/storage/signing';
import type { ByteRange, ObjectInfo, StoredObject } from '../core/storage/storage';
import type { OperationDeps } from './deps';

/** A missing object, a bad key and a bad signature all answer alike, so none can be probed. */
const notFound = () => new NotFoundError('NOT_FOUND', 'No such file.');

function isValidKey(key: string): boolean {
  try {
    assertValidKey(key);
    return true;
  } catch {
    return false;
  }
}

/** A stored file a signed URL names: which version is stored, and its bytes on demand. */
export interface OpenedFile {
  info: ObjectInfo;
  /** The name it was uploaded under, for an attachment. */
  filename?: string;
  /** Its bytes, or only `range` of them; the stream is to be consumed or destroyed. */
  read(range?: ByteRange): Promise<StoredObject>;
}

/** Stored files, served by their signed URLs. */
export function createFilesOperations(deps: OperationDeps) {
  const toNotFound = (err: unknown): never => {
    throw err instanceof ObjectNotFoundError ? notFound() : err;
  };
  return {
    /**
     * The stored object a signed URL names, without reading it yet: a conditional request or an
     * unsatisfiable range is answered from `info` alone.
     */
    async openFile(key: string, sig: string | undefined, expires: string | undefined): Promise<OpenedFile> {
      if (!isValidKey(key) || !verifyKeySignature(deps.config, key, sig, expires)) throw notFound();
      const info = await deps.storage.stat(key).catch(toNotFound);
      const attachment = await deps.db.prisma.attachment.findUnique({
        where: { storageKey: key },
        select: { filename: true },
      });
      return {
        info,
        ...(attachment ? { filename: attachment.filename } : {}),
        read: (range) => deps.storage.get(key, range ? { range } : {}).catch(toNotFound),
      };
    },
  };
}

export type FilesOperations = ReturnType<typeof createFilesOperations>;
