import { selectChat } from '../core/chats/store';
import { NotFoundError, ValidationError } from '../core/errors/app-error';
import { toAttachmentDto, type AttachmentDto } from '../core/schemas/attachments';
import { storeAttachments } from '../core/uploads/attachments';
import { fileFingerprints, type ReceivedFile } from '../core/uploads/receive';
import type { Caller, OperationDeps } from './deps';
import { idempotent } from './idempotency';

interface UploadInput {
  chatId?: string;
  files: readonly ReceivedFile[];
}

/** Files stored for later turns. */
export function createUploadsOperations(deps: OperationDeps) {
  /** Stores the files (typed by their content, by the transport) and their attachment rows. */
  const uploadFiles = async (
    caller: Caller,
    input: UploadInput,
  ): Promise<{ attachments: AttachmentDto[]; chatId: string | null }> => {
    if (input.files.length === 0)
      throw new ValidationError([{ path: 'body.file', message: 'at least one file is required' }]);
    const chatId = input.chatId ?? null;
    if (chatId && !(await selectChat(deps.db.pool, caller.userId, chatId)))
      throw new NotFoundError('CHAT_NOT_FOUND', 'Chat not found.');
    const rows = await storeAttachments(deps, { userId: caller.userId, chatId, files: input.files });
    return { attachments: rows.map((row) => toAttachmentDto(deps.storage, row)), chatId };
  };
  return {
    /** Stores files, once per Idempotency-Key. */
    uploadFiles: idempotent(deps, 'uploadFiles', {
      fingerprint: async ({ chatId, files }: UploadInput) => ({
        chatId,
        files: await fileFingerprints(files),
      }),
      run: uploadFiles,
    }),
  };
}

export type UploadsOperations = ReturnType<typeof createUploadsOperations>;
