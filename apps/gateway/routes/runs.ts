import { z } from 'zod';
import { discardObjects, putObjects, type PreparedAttachment } from '../../../core/uploads/attachments';
import { MAX_FILES, receiveFiles, receivedFiles } from '../../../core/uploads/receive';
import { NO_NUL, NO_NUL_MESSAGE } from '../../../core/schemas/common';
import { queuedTurnSchema, runSnapshotSchema, waitpointSchema } from '../../../core/schemas/runs';
import type { GatewayDeps } from '../deps';
import { currentAuth } from '../http/auth-context';
import type { RouteTable } from '../http/route-table';
import { sendLimit } from '../middleware/rate-limit';
import { admitTurn, type AdmittedTurn } from '../runs/admission';
import { decideWaitpoint, requestCancel } from '../runs/control';
import { loadSnapshot } from '../runs/snapshot';
import { startRun } from '../runs/start';

const MAX_TEXT = 8192;
const MAX_IMAGE_URLS = 8;
const MAX_FEEDBACK = 2000;

export const completionBodySchema = z
  .object({
    text: z.string().min(1).max(MAX_TEXT).regex(NO_NUL, NO_NUL_MESSAGE),
    chatId: z.uuid().optional(),
    image_urls: z
      .array(z.url({ protocol: /^https?$/ }))
      .max(MAX_IMAGE_URLS)
      .default([]),
    attachmentIds: z.array(z.uuid()).max(MAX_IMAGE_URLS).default([]),
    planMode: z.boolean().default(false),
  })
  .strict()
  .openapi('CompletionRequest');

const completionFormSchema = z
  .object({
    text: z.string().min(1).max(MAX_TEXT).regex(NO_NUL, NO_NUL_MESSAGE),
    chatId: z.uuid().optional(),
    planMode: z
      .enum(['true', 'false'])
      .default('false')
      .transform((v) => v === 'true'),
    file: z
      .array(z.string().openapi({ format: 'binary' }))
      .max(MAX_FILES)
      .optional()
      .openapi({ description: `repeat for several files; ${MAX_FILES} files in all` }),
    files: z
      .array(z.string().openapi({ format: 'binary' }))
      .max(MAX_FILES)
      .optional(),
  })
  .strict()
  .openapi('CompletionForm');

const runParams = z.object({ chatId: z.uuid(), runId: z.uuid() });
const waitpointParams = runParams.extend({ waitpointId: z.uuid() });

export function registerRunsRoutes(routes: RouteTable, deps: GatewayDeps): void {
  routes.add({
    method: 'post',
    path: '/api/v1/completions',
    operationId: 'sendTurn',
    summary: 'Queue a turn for the agent; creates the chat when chatId is omitted',
    tag: 'Runs',
    auth: 'apiKey',
    request: { body: completionBodySchema },
    multipartBody: completionFormSchema,
    keyLimits: [sendLimit(deps)],
    before: [receiveFiles({ multipartOnly: false })],
    responses: { 202: { description: 'Turn accepted', schema: queuedTurnSchema } },
    errors: [
      'CHAT_NOT_FOUND',
      'ATTACHMENT_NOT_FOUND',
      'RUN_ACTIVE',
      'TOO_MANY_FILES',
      'PAYLOAD_TOO_LARGE',
      'INVALID_JSON',
      'UNSUPPORTED_MEDIA_TYPE',
    ],
    handler: async ({ body }, req) => {
      const { userId } = currentAuth(req);
      // Files are stored first and their rows join the turn's statement: a refused send
      // (409, 404) deletes them again, leaving nothing behind.
      const uploads: PreparedAttachment[] = await putObjects(deps.storage, userId, receivedFiles(req));
      let admitted: AdmittedTurn;
      try {
        admitted = await admitTurn(
          deps,
          {
            userId,
            chatId: body.chatId,
            text: body.text,
            imageUrls: 'image_urls' in body ? body.image_urls : [],
            attachmentIds: 'attachmentIds' in body ? body.attachmentIds : [],
            planMode: body.planMode,
            traceparent: req.get('traceparent'),
          },
          uploads,
        );
      } catch (err) {
        await discardObjects(deps.storage, uploads);
        throw err;
      }
      if (deps.config.FAULT_PAUSE_BEFORE_START !== undefined) {
        req.log.warn({ runId: admitted.run.runId }, 'fault injection: paused between commit and start');
        await new Promise((resolve) => setTimeout(resolve, deps.config.FAULT_PAUSE_BEFORE_START));
      }
      const triggerRunId = await startRun(deps, admitted.run);
      return {
        status: 202,
        body: {
          chatId: admitted.run.chatId,
          messageId: admitted.messageId,
          runId: admitted.run.runId,
          triggerRunId,
          status: 'queued',
        },
      };
    },
  });

  routes.add({
    method: 'get',
    path: '/api/v1/chats/:chatId/runs/:runId',
    operationId: 'getRun',
    summary: 'Poll a run: status, partial text, tool calls, waitpoints and error',
    tag: 'Runs',
    auth: 'apiKey',
    request: { params: runParams },
    responses: { 200: { description: 'Run snapshot', schema: runSnapshotSchema } },
    errors: ['CHAT_NOT_FOUND', 'RUN_NOT_FOUND'],
    handler: async ({ params }, req) => ({
      status: 200,
      body: await loadSnapshot(deps, { userId: currentAuth(req).userId, ...params }),
    }),
  });

  routes.add({
    method: 'post',
    path: '/api/v1/chats/:chatId/runs/:runId/cancel',
    operationId: 'cancelRun',
    summary: 'Cancel an active run; it ends CANCELLED and agent.failed is sent',
    tag: 'Runs',
    auth: 'apiKey',
    extension: true,
    request: { params: runParams },
    responses: { 202: { description: 'Cancellation requested', schema: runSnapshotSchema } },
    errors: ['CHAT_NOT_FOUND', 'RUN_NOT_FOUND', 'RUN_NOT_ACTIVE'],
    handler: async ({ params }, req) => {
      const scope = { userId: currentAuth(req).userId, ...params };
      await requestCancel(deps, scope);
      return { status: 202, body: await loadSnapshot(deps, scope) };
    },
  });

  routes.add({
    method: 'post',
    path: '/api/v1/chats/:chatId/runs/:runId/waitpoints/:waitpointId/complete',
    operationId: 'completeWaitpoint',
    summary: 'Approve or reject a plan waiting for approval',
    tag: 'Runs',
    auth: 'apiKey',
    extension: true,
    request: {
      params: waitpointParams,
      body: z
        .object({
          approved: z.boolean(),
          feedback: z.string().max(MAX_FEEDBACK).regex(NO_NUL, NO_NUL_MESSAGE).optional(),
        })
        .strict()
        .openapi('WaitpointDecision'),
    },
    responses: { 202: { description: 'Decision accepted', schema: waitpointSchema } },
    errors: [
      'CHAT_NOT_FOUND',
      'RUN_NOT_FOUND',
      'WAITPOINT_NOT_FOUND',
      'RUN_NOT_ACTIVE',
      'WAITPOINT_RESOLVED',
    ],
    handler: async ({ params, body }, req) => {
      const row = await decideWaitpoint(deps, { userId: currentAuth(req).userId, ...params }, body);
      return {
        status: 202,
        body: {
          id: row.id,
          type: 'PLAN_APPROVAL',
          status: row.status,
          plan: row.plan,
          feedback: row.feedback,
          createdAt: row.createdAt.toISOString(),
          resolvedAt: row.resolvedAt?.toISOString() ?? null,
        },
      };
    },
  });
}
