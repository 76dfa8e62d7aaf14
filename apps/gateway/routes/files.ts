import { pipeline } from 'node:stream/promises';
import { z } from 'zod';
import { inlineContentDisposition } from '../../../core/uploads/filename';
import type { Operations } from '../../../operations';
import type { RouteTable } from '../http/route-table';

const IMMUTABLE = 'public, max-age=31536000, immutable';

export function registerFilesRoutes(routes: RouteTable, ops: Operations): void {
  routes.add({
    method: 'get',
    path: '/files/*key',
    operationId: 'getFile',
    summary: 'Streams a stored file; the URL (with its signature) comes from an attachment or a tool asset',
    tag: 'Files',
    auth: 'none',
    extension: true,
    request: {
      // Express 5 hands a wildcard over as its decoded path segments.
      params: z.object({
        key: z.array(z.string()).openapi({ type: 'string', description: 'The storage key.' }),
      }),
      query: z.object({
        sig: z.string().optional().openapi({ description: 'HMAC signature of the key; it never expires.' }),
      }),
    },
    responses: {
      200: {
        description: 'The file, with its stored content type',
        headers: z.object({ 'content-disposition': z.string(), 'cache-control': z.string() }),
      },
    },
    errors: ['NOT_FOUND'],
    handler: async ({ params, query }, _req, res) => {
      const { object, filename } = await ops.files.openFile(params.key.join('/'), query.sig);
      try {
        res.setHeader('content-type', object.contentType);
        res.setHeader('content-length', String(object.size));
        res.setHeader('x-content-type-options', 'nosniff');
        // Stored files are media, never documents: nothing in one may run as part of our origin.
        res.setHeader('content-security-policy', "default-src 'none'; sandbox");
        res.setHeader('content-disposition', filename ? inlineContentDisposition(filename) : 'inline');
        res.setHeader('cache-control', IMMUTABLE);
        res.status(200);
      } catch (err) {
        object.body.destroy();
        throw err;
      }
      // The body is streamed here; the table's own `end()` afterwards finds the response finished.
      await pipeline(object.body, res).catch((err: NodeJS.ErrnoException) => {
        // A client that goes away mid-download is not a server error.
        if (err.code !== 'ERR_STREAM_PREMATURE_CLOSE') throw err;
      });
      return { status: 200 };
    },
  });
}
