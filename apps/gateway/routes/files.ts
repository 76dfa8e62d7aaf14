import { pipeline } from 'node:stream/promises';
import { z } from 'zod';
import { AppError } from '../../../core/errors/app-error';
import { inlineContentDisposition } from '../../../core/uploads/filename';
import type { Operations } from '../../../operations';
import { notModified, requestedRange } from '../http/conditional';
import type { RouteTable } from '../http/route-table';

/**
 * Only the client that asked may keep a copy (a shared cache or CDN may not: the file is one
 * user's), and only until the URL expires; the bytes at one signed URL never change meanwhile.
 */
const cacheControl = (secondsLeft: number) => `private, max-age=${secondsLeft}, immutable`;

export function registerFilesRoutes(routes: RouteTable, ops: Operations): void {
  routes.add({
    method: 'get',
    path: '/files/*key',
    operationId: 'getFile',
    summary:
      'Streams a stored file (byte ranges and conditional requests included); the URL (with its signature) comes from an attachment or a tool asset',
    tag: 'Files',
    auth: 'none',
    extension: true,
    request: {
      // Express 5 hands a wildcard over as its decoded path segments.
      params: z.object({
        key: z.array(z.string()).openapi({ type: 'string', description: 'The storage key.' }),
      }),
      query: z.object({
        exp: z.string().optional().openapi({
          description: 'When the URL stops working (unix seconds; FILE_URL_TTL after it was signed).',
        }),
        sig: z.string().optional().openapi({ description: 'HMAC signature of the key and `exp`.' }),
      }),
    },
    responses: {
      200: {
        description: 'The file, with its stored content type',
        headers: z.object({
          'content-disposition': z.string(),
          'cache-control': z.string(),
          etag: z.string(),
          'last-modified': z.string(),
          'accept-ranges': z.string(),
        }),
      },
      206: {
        description: 'The one byte range a `Range` header asked for (several ranges get the whole file)',
        headers: z.object({ 'content-range': z.string().openapi({ example: 'bytes 100-199/1000' }) }),
      },
      304: { description: '`If-None-Match` (or `If-Modified-Since`) names the stored version' },
    },
    // The attachment lookup reaches PostgreSQL.
    errors: ['NOT_FOUND', 'RANGE_NOT_SATISFIABLE', 'SERVICE_UNAVAILABLE'],
    handler: async ({ params, query }, req, res) => {
      const file = await ops.files.openFile(params.key.join('/'), query.sig, query.exp);
      const { info } = file;
      // Validators first: a 304 and a 416 carry them too.
      res.setHeader('etag', info.etag);
      res.setHeader('last-modified', info.lastModified.toUTCString());
      res.setHeader('accept-ranges', 'bytes');
      if (notModified(req, info)) {
        res.setHeader('cache-control', cacheControl(file.secondsLeft));
        return { status: 304 };
      }
      const range = requestedRange(req, info);
      if (range === 'unsatisfiable') {
        throw new AppError(
          'RANGE_NOT_SATISFIABLE',
          `The range asked for is not within the file's ${info.size} bytes.`,
          undefined,
          { 'content-range': `bytes */${info.size}` },
        );
      }
      const object = await file.read(range);
      const status = range ? 206 : 200;
      try {
        res.setHeader('content-type', object.contentType);
        if (range) {
          res.setHeader('content-range', `bytes ${range.start}-${range.end}/${info.size}`);
          res.setHeader('content-length', String(range.end - range.start + 1));
        } else {
          res.setHeader('content-length', String(object.size));
        }
        res.setHeader('x-content-type-options', 'nosniff');
        // Stored files are media, never documents: nothing in one may run as part of our origin.
        res.setHeader('content-security-policy', "default-src 'none'; sandbox");
        res.setHeader(
          'content-disposition',
          file.filename ? inlineContentDisposition(file.filename) : 'inline',
        );
        res.setHeader('cache-control', cacheControl(file.secondsLeft));
        res.status(status);
      } catch (err) {
        object.body.destroy();
        throw err;
      }
      // The body is streamed here; the table's own `end()` afterwards finds the response finished.
      await pipeline(object.body, res).catch((err: NodeJS.ErrnoException) => {
        // A client that goes away mid-download is not a server error.
        if (err.code !== 'ERR_STREAM_PREMATURE_CLOSE') throw err;
      });
      return { status };
    },
  });
}
