import { NotFoundError } from '../core/errors/app-error';
import { ObjectNotFoundError, isValidKey } from '../core/storage/keys';
import { fileUrlOf, verifyKeySignature } from '../core/storage/signing';
import type { ByteRange, ObjectInfo, StoredObject } from '../core/storage/storage';
import { selectAttachmentFilename } from '../core/uploads/store';
import type { OperationDeps } from './deps';

/** A missing object, a bad key and a bad signature all answer alike, so none can be probed. */
const notFound = () => new NotFoundError('NOT_FOUND', 'No such file.');

/** A stored file a signed URL names: which version is stored, and its bytes on demand. */
export interface OpenedFile {
  info: ObjectInfo;
  /** The name it was uploaded under, for an attachment. */
  filename?: string;
  /** Seconds until the URL that named it expires: how long anyone may keep a copy. */
  secondsLeft: number;
  /** Its bytes, or only `range` of them; the stream is to be consumed or destroyed. */
  read(range?: ByteRange): Promise<StoredObject>;
}

/** The image types an MCP client shows from `image` content. */
const INLINE_IMAGE_TYPES = ['image/png', 'image/jpeg', 'image/webp', 'image/gif'];

/** Stored files, served by their signed URLs. */
export function createFilesOperations(deps: OperationDeps) {
  const toNotFound = (err: unknown): never => {
    throw err instanceof ObjectNotFoundError ? notFound() : err;
  };
  const openFile = async (
    key: string,
    sig: string | undefined,
    expires: string | undefined,
  ): Promise<OpenedFile> => {
    if (!isValidKey(key) || !verifyKeySignature(deps.config, key, sig, expires)) throw notFound();
    const info = await deps.storage.stat(key).catch(toNotFound);
    const filename = await selectAttachmentFilename(deps.db, key);
    return {
      info,
      ...(filename === undefined ? {} : { filename }),
      secondsLeft: Math.max(0, Number(expires) - Math.floor(Date.now() / 1000)),
      read: (range) => deps.storage.get(key, range ? { range } : {}).catch(toNotFound),
    };
  };
  return {
    /**
     * The stored object a signed URL names, without reading it yet: a conditional request or an
     * unsatisfiable range is answered from `info` alone.
     */
    openFile,

    /**
     * The image a signed file URL of ours names, base64, when it is a PNG, JPEG, WebP or GIF of at
     * most `maxBytes`; undefined otherwise (another URL, too large, gone), so the caller gives the
     * link alone. Never fails: the image is an extra beside a link that works anyway.
     */
    async inlineImage(
      url: string,
      maxBytes: number,
    ): Promise<{ data: string; mimeType: string } | undefined> {
      const file = fileUrlOf(deps.config, url);
      if (!file) return undefined;
      try {
        const opened = await openFile(file.key, file.sig, file.exp);
        const mimeType = opened.info.contentType.split(';')[0]?.trim().toLowerCase() ?? '';
        if (opened.info.size > maxBytes || !INLINE_IMAGE_TYPES.includes(mimeType)) return undefined;
        const chunks: Buffer[] = [];
        for await (const chunk of (await opened.read()).body) chunks.push(chunk as Buffer);
        return { data: Buffer.concat(chunks).toString('base64'), mimeType };
      } catch (err) {
        if (!(err instanceof NotFoundError)) deps.logger.warn({ err }, 'image not inlined; the link stands');
        return undefined;
      }
    },
  };
}

export type FilesOperations = ReturnType<typeof createFilesOperations>;
