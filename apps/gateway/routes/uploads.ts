import { z } from 'zod';
import { NotFoundError, ValidationError } from '../../../core/errors/app-error';
import { attachmentSchema, toAttachmentDto } from '../../../core/schemas/attachments';
import { storeAttachments } from '../../../core/uploads/attachments';
import { MAX_FILES, receiveFiles, receivedFiles } from '../../../core/uploads/receive';
import type { GatewayDeps } from '../deps';
import { currentAuth } from '../http/auth-context';
import type { RouteTable } from '../http/route-table';

const binary = z.string().openapi({ type: 'string', format: 'binary' });

/** The form's text fields are validated; the file fields are only documented (multer takes them). */
const uploadFormSchema = z
  .object({
    chatId: z.uuid().optional().openapi({
      description: "Attaches the files to this chat (the caller's); omitting it creates no chat.",
    }),
    file: binary.optional().openapi({
      description: `An image, video or audio file, at most 20 MB; repeat the field for several (${MAX_FILES} files in all).`,
    }),
    files: z
      .array(binary)
      .max(MAX_FILES)
      .optional()
      .openapi({ description: 'Another way to send several files.' }),
  })
  .strict()
  // At least one file, in either field.
  .openapi({ anyOf: [{ required: ['file'] }, { required: ['files'] }] });

const uploadResultSchema = z
  .object({ attachments: z.array(attachmentSchema), chatId: z.uuid().nullable() })
  .openapi('UploadResult');

export function registerUploadsRoutes(routes: RouteTable, deps: GatewayDeps): void {
  routes.add({
    method: 'post',
    path: '/api/v1/uploads',
    operationId: 'uploadFiles',
    summary: 'Stores image, video or audio files and returns their attachment ids',
    tag: 'Uploads',
    auth: 'apiKey',
    request: { body: uploadFormSchema },
    bodyMediaType: 'multipart/form-data',
    before: [receiveFiles()],
    responses: { 201: { description: 'Stored', schema: uploadResultSchema } },
    errors: ['CHAT_NOT_FOUND', 'TOO_MANY_FILES', 'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE'],
    handler: async ({ body }, req) => {
      const { userId } = currentAuth(req);
      const files = receivedFiles(req);
      if (files.length === 0)
        throw new ValidationError([{ path: 'body.file', message: 'at least one file is required' }]);
      const chatId = body.chatId ?? null;
      if (chatId) {
        const chat = await deps.db.prisma.chat.findFirst({
          where: { id: chatId, userId, deletedAt: null },
          select: { id: true },
        });
        if (!chat) throw new NotFoundError('CHAT_NOT_FOUND', 'Chat not found.');
      }
      const rows = await storeAttachments(deps, { userId, chatId, files });
      return {
        status: 201,
        body: { attachments: rows.map((row) => toAttachmentDto(deps.storage, row)), chatId },
      };
    },
  });
}
