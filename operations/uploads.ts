import { selectChat } from '../core/chats/store';
import { NotFoundError, ValidationError } from '../core/errors/app-error';
import { toAttachmentDto, type AttachmentDto } from '../core/schemas/attachments';
import { storeAttachments } from '../core/uploads/attachments';
import type { ReceivedFile } from '../core/uploads/receive';
import type { Caller, OperationDeps } from './deps';

/** Files stored for later turns. */
export function createUploadsOperations(deps: OperationDeps) {
  return {
    /** Stores the files (typed by their content, by the transport) and their attachment rows. */
    async uploadFiles(
      caller: Caller,
      input: { chatId?: string; files: readonly ReceivedFile[] },
    ): Promise<{ attachments: AttachmentDto[]; chatId: string | null }> {
      if (input.files.length === 0)
        throw new ValidationError([{ path: 'body.file', message: 'at least one file is required' }]);
      const chatId = input.chatId ?? null;
      if (chatId && !(await selectChat(deps.db.pool, caller.userId, chatId)))
        throw new NotFoundError('CHAT_NOT_FOUND', 'Chat not found.');
      const rows = await storeAttachments(deps, { userId: caller.userId, chatId, files: input.files });
      return { attachments: rows.map((row) => toAttachmentDto(deps.storage, row)), chatId };
    },
  };
}

export type UploadsOperations = ReturnType<typeof createUploadsOperations>;
