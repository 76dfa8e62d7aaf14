import { NotFoundError } from '../core/errors/app-error';
import { ObjectNotFoundError, assertValidKey } from '../core/storage/keys';
import { verifyKeySignature } from '../core/storage/signing';
import type { StoredObject } from '../core/storage/storage';
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

/** Stored files, served by their signed URLs. */
export function createFilesOperations(deps: OperationDeps) {
  return {
    /** The stored object a signed URL names, and the name it was uploaded under, if any. */
    async openFile(
      key: string,
      sig: string | undefined,
    ): Promise<{ object: StoredObject; filename?: string }> {
      if (!isValidKey(key) || !verifyKeySignature(deps.config, key, sig)) throw notFound();
      const object = await deps.storage.get(key).catch((err: unknown) => {
        throw err instanceof ObjectNotFoundError ? notFound() : err;
      });
      try {
        const attachment = await deps.db.prisma.attachment.findUnique({
          where: { storageKey: key },
          select: { filename: true },
        });
        return { object, ...(attachment ? { filename: attachment.filename } : {}) };
      } catch (err) {
        object.body.destroy();
        throw err;
      }
    },
  };
}

export type FilesOperations = ReturnType<typeof createFilesOperations>;
