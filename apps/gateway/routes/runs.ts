import {
  completionBodySchema,
  completionFormSchema,
  planDecisionSchema,
  queuedTurnSchema,
  runParamsSchema,
  runSnapshotSchema,
  waitpointParamsSchema,
  waitpointSchema,
} from '../../../core/schemas/runs';
import { receiveFiles, receivedFiles } from '../../../core/uploads/receive';
import type { Operations } from '../../../operations';
import { currentAuth } from '../http/auth-context';
import type { RouteTable } from '../http/route-table';

export function registerRunsRoutes(routes: RouteTable, ops: Operations): void {
  routes.add({
    method: 'post',
    path: '/api/v1/completions',
    operationId: 'sendTurn',
    summary: 'Queue a turn for the agent; creates the chat when chatId is omitted',
    tag: 'Runs',
    auth: 'apiKey',
    request: { body: completionBodySchema },
    multipartBody: completionFormSchema,
    keyLimits: [ops.limits.send],
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
    handler: async ({ body }, req) => ({
      status: 202,
      body: await ops.runs.sendTurn(currentAuth(req), {
        text: body.text,
        chatId: body.chatId,
        imageUrls: 'image_urls' in body ? body.image_urls : [],
        attachmentIds: 'attachmentIds' in body ? body.attachmentIds : [],
        planMode: body.planMode,
        files: receivedFiles(req),
        traceparent: req.get('traceparent'),
      }),
    }),
  });

  routes.add({
    method: 'get',
    path: '/api/v1/chats/:chatId/runs/:runId',
    operationId: 'getRun',
    summary: 'Poll a run: status, partial text, tool calls, waitpoints and error',
    tag: 'Runs',
    auth: 'apiKey',
    request: { params: runParamsSchema },
    responses: { 200: { description: 'Run snapshot', schema: runSnapshotSchema } },
    errors: ['CHAT_NOT_FOUND', 'RUN_NOT_FOUND'],
    handler: async ({ params }, req) => ({
      status: 200,
      body: await ops.runs.getRun(currentAuth(req), params),
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
    request: { params: runParamsSchema },
    responses: { 202: { description: 'Cancellation requested', schema: runSnapshotSchema } },
    errors: ['CHAT_NOT_FOUND', 'RUN_NOT_FOUND', 'RUN_NOT_ACTIVE'],
    handler: async ({ params }, req) => ({
      status: 202,
      body: await ops.runs.cancelRun(currentAuth(req), params),
    }),
  });

  routes.add({
    method: 'post',
    path: '/api/v1/chats/:chatId/runs/:runId/waitpoints/:waitpointId/complete',
    operationId: 'completeWaitpoint',
    summary: 'Approve or reject a plan waiting for approval',
    tag: 'Runs',
    auth: 'apiKey',
    extension: true,
    request: { params: waitpointParamsSchema, body: planDecisionSchema },
    responses: { 202: { description: 'Decision accepted', schema: waitpointSchema } },
    errors: [
      'CHAT_NOT_FOUND',
      'RUN_NOT_FOUND',
      'WAITPOINT_NOT_FOUND',
      'RUN_NOT_ACTIVE',
      'WAITPOINT_RESOLVED',
    ],
    handler: async ({ params, body }, req) => ({
      status: 202,
      body: await ops.runs.decidePlan(currentAuth(req), params, body),
    }),
  });
}
