import { z } from 'zod';
import { attachmentSchema } from '../../../core/schemas/attachments';
import { exampleAttachment, exampleChat } from '../../../core/schemas/examples';
import { MAX_FILES, receiveFiles, receivedFiles } from '../../../core/uploads/receive';
import type { Operations } from '../../../operations';
import { currentAuth } from '../http/auth-context';
import {
  IDEMPOTENCY_ERRORS,
  idempotencyHeadersSchema,
  replayable,
  replayedHeaderSchema,
} from '../http/idempotency';
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
  .openapi({
    anyOf: [{ required: ['file'] }, { required: ['files'] }],
    example: { chatId: exampleChat.id, file: '<binary: lighthouse.jpg>' },
  });

const uploadResultSchema = z
  .object({ attachments: z.array(attachmentSchema), chatId: z.uuid().nullable() })
  .openapi('UploadResult', { example: { attachments: [exampleAttachment], chatId: exampleChat.id } });

export function registerUploadsRoutes(routes: RouteTable, ops: Operations): void {
  routes.add({
    method: 'post',
    path: '/api/v1/uploads',
    operationId: 'uploadFiles',
    summary: 'Stores image, video or audio files and returns their attachment ids',
    tag: 'Uploads',
    auth: 'apiKey',
    request: { headers: idempotencyHeadersSchema, body: uploadFormSchema },
    bodyMediaType: 'multipart/form-data',
    before: [receiveFiles()],
    responses: {
      201: {
        description: 'Stored',
        schema: uploadResultSchema,
        headers: replayedHeaderSchema,
        links: {
          sendTurn: {
            operationId: 'sendTurn',
            requestBody: { attachmentIds: ['$response.body#/attachments/0/id'] },
          },
          tool_crop_image: {
            operationId: 'tool_crop_image',
            requestBody: { attachmentId: '$response.body#/attachments/0/id' },
          },
        },
      },
    },
    errors: [...IDEMPOTENCY_ERRORS, 'CHAT_NOT_FOUND', 'LIMIT_REACHED'],
    handler: async ({ body, headers }, req) =>
      replayable(
        201,
        await ops.uploads.uploadFiles(
          currentAuth(req),
          { chatId: body.chatId, files: receivedFiles(req) },
          headers['idempotency-key'],
        ),
      ),
  });
}
