import { extendZodWithOpenApi } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { exampleAttachment } from './examples';
import type { ObjectStorage } from '../storage/storage';

extendZodWithOpenApi(z);

export const attachmentSchema = z
  .object({
    id: z.uuid(),
    filename: z.string(),
    mimeType: z.string(),
    status: z
      .string()
      .openapi({ description: '`ready` when stored; `processing` and `failed` are reserved.' }),
    url: z.string().openapi({ description: 'Durable URL of the file; it does not expire.' }),
  })
  .openapi('Attachment', { example: exampleAttachment });

export type AttachmentDto = z.output<typeof attachmentSchema>;

/** An Attachment row (or a prepared one) as the API shows it; the URL comes from storage. */
export function toAttachmentDto(
  storage: ObjectStorage,
  row: { id: string; filename: string; mimeType: string; status: string; storageKey: string },
): AttachmentDto {
  return {
    id: row.id,
    filename: row.filename,
    mimeType: row.mimeType,
    status: row.status,
    url: storage.url(row.storageKey),
  };
}
