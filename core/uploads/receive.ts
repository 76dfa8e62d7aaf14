import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Request, RequestHandler } from 'express';
import multer, { MulterError } from 'multer';
import { AppError, ValidationError } from '../errors/app-error';
import { fileHash } from '../hashing/canonical';
import { sanitizeFilename } from './filename';

export const MAX_FILES = 8;
export const MAX_FILE_BYTES = 20 * 1024 * 1024;
export const TOO_MANY_FILES_MESSAGE = `At most ${MAX_FILES} files may be sent in one request.`;
export const FILE_TOO_LARGE_MESSAGE = `Each file may be at most ${MAX_FILE_BYTES / 1024 / 1024} MB.`;
/** The multipart field names that may carry files: `file` (repeatable) and `files`. */
export const FILE_FIELDS = ['file', 'files'] as const;

const LIMITS = {
  files: MAX_FILES,
  fileSize: MAX_FILE_BYTES,
  fields: 20,
  parts: 30,
  fieldSize: 64 * 1024,
  fieldNameSize: 100,
};
const ACCEPTED_MEDIA = /^(image|video|audio)\//;

/** A received file, still on local disk in a per-request temp folder removed with the response. */
export interface ReceivedFile {
  /** Temp path; valid until the response closes. */
  path: string;
  filename: string;
  /** Decided from the content (magic bytes), never from the client's header. */
  mimeType: string;
  size: number;
}

const FILES = Symbol('receivedFiles');
type WithFiles = Request & { [FILES]?: ReceivedFile[] };

/** The files `receiveFiles` accepted for this request; empty when none were sent. */
export function receivedFiles(req: Request): ReceivedFile[] {
  return (req as WithFiles)[FILES] ?? [];
}

function fromMulterError(err: MulterError): AppError {
  switch (err.code) {
    case 'LIMIT_FILE_COUNT':
      return new AppError('TOO_MANY_FILES', TOO_MANY_FILES_MESSAGE);
    case 'LIMIT_FILE_SIZE':
      return new AppError('PAYLOAD_TOO_LARGE', FILE_TOO_LARGE_MESSAGE);
    case 'LIMIT_UNEXPECTED_FILE':
      return new ValidationError([
        { path: `body.${err.field ?? ''}`, message: `files go in the fields ${FILE_FIELDS.join(' or ')}` },
      ]);
    default:
      return new ValidationError([{ path: err.field ? `body.${err.field}` : 'body', message: err.message }]);
  }
}

async function sniff(file: Express.Multer.File): Promise<ReceivedFile> {
  // file-type is ESM-only; a dynamic import keeps this module loadable from CommonJS everywhere.
  const { fileTypeFromFile } = await import('file-type');
  const detected = await fileTypeFromFile(file.path);
  if (!detected || !ACCEPTED_MEDIA.test(detected.mime)) {
    throw new AppError('UNSUPPORTED_MEDIA_TYPE', 'Only image, video and audio files are accepted.', [
      {
        path: `body.${file.fieldname}`,
        message: `${sanitizeFilename(file.originalname)} is not an image, video or audio file`,
      },
    ]);
  }
  return {
    path: file.path,
    filename: sanitizeFilename(file.originalname, detected.ext),
    mimeType: detected.mime,
    size: file.size,
  };
}

export interface ReceiveOptions {
  /**
   * When false, a request that is not multipart passes through untouched (a route that also takes
   * JSON); when true (the default) it is refused with 415.
   */
  multipartOnly?: boolean;
}

/**
 * Receives a multipart body for a route's `before:`: text fields land in `req.body`, files on
 * disk (never whole in memory) in a temp folder that is removed when the response closes, whatever
 * the outcome. Each file's type is sniffed from its bytes; anything but image, video or audio is
 * refused with 415 before the handler runs.
 */
export function receiveFiles(options: ReceiveOptions = {}): RequestHandler {
  const multipartOnly = options.multipartOnly ?? true;
  return async (req, res, next) => {
    if (!req.is('multipart/form-data')) {
      if (!multipartOnly) return next();
      throw new AppError('UNSUPPORTED_MEDIA_TYPE', 'The request body must be multipart/form-data.');
    }
    const dir = await mkdtemp(path.join(tmpdir(), 'svc-upload-'));
    res.on('close', () => void rm(dir, { recursive: true, force: true }).catch(() => undefined));
    const upload = multer({
      storage: multer.diskStorage({ destination: dir }),
      limits: LIMITS,
      // Browsers and fetch send UTF-8 filenames; busboy's default would read them as latin1.
      defParamCharset: 'utf8',
      // busboy's own basename turns `.`, `..` and `a/..` into no name, and multer then drops the
      // file; whole names reach sanitizeFilename instead, which keeps the last segment itself.
      preservePath: true,
    }).fields(FILE_FIELDS.map((name) => ({ name, maxCount: MAX_FILES })));
    await new Promise<void>((resolve, reject) => {
      upload(req, res, (err: unknown) => {
        if (!err) resolve();
        else if (err instanceof MulterError) reject(fromMulterError(err));
        // A failing disk (ENOSPC, EACCES) is ours to answer with 500, not the client's fault.
        else if ((err as NodeJS.ErrnoException).syscall) reject(err as Error);
        // Anything else is busboy failing on the body itself: truncated, no boundary, bad headers.
        else reject(new ValidationError([{ path: 'body', message: 'malformed multipart body' }]));
      });
    });
    const byField = (req.files ?? {}) as Record<string, Express.Multer.File[]>;
    const files = FILE_FIELDS.flatMap((name) => byField[name] ?? []);
    (req as WithFiles)[FILES] = await Promise.all(files.map(sniff));
    next();
  };
}

/** What identifies received files in a request's fingerprint: their names, types and bytes. */
export function fileFingerprints(
  files: readonly ReceivedFile[],
): Promise<{ filename: string; mimeType: string; sha256: string }[]> {
  return Promise.all(
    files.map(async (f) => ({ filename: f.filename, mimeType: f.mimeType, sha256: await fileHash(f.path) })),
  );
}
