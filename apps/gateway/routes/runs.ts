import {
  completionBodySchema,
  completionFormSchema,
  messageParamsSchema,
  planDecisionSchema,
  queuedTurnSchema,
  regenerateBodySchema,
  sendSettingsOf,
  runListQuerySchema,
  runListSchema,
  runParamsSchema,
  runSnapshotSchema,
  runStreamEventSchema,
  chatSnapshotSchema,
  chatStreamEventSchema,
  streamHeadersSchema,
  waitpointParamsSchema,
  waitpointSchema,
} from '../../../core/schemas/runs';
import { exampleRegeneratedTurn } from '../../../core/schemas/examples';
import { receiveFiles, receivedFiles } from '../../../core/uploads/receive';
import { chatParamsSchema } from '../../../core/schemas/chats';
import type { Operations } from '../../../operations';
import { turnInput } from '../../../operations/runs';
import { currentAuth } from '../http/auth-context';
import { noneMatch } from '../http/conditional';
import { sendEventStream } from '../http/event-stream';
import { bearerToken } from '../../../core/http/request';
import {
  IDEMPOTENCY_ERRORS,
  idempotencyHeadersSchema,
  replayable,
  replayedHeaderSchema,
} from '../http/idempotency';
import type { RouteTable } from '../http/route-table';

export function registerRunsRoutes(routes: RouteTable, ops: Operations): void {
  routes.add({
    method: 'post',
    path: '/api/v1/completions',
    operationId: 'sendTurn',
    summary: 'Queue a turn for the agent; creates the chat when chatId is omitted',
    tag: 'Runs',
    auth: 'apiKey',
    request: { headers: idempotencyHeadersSchema, body: completionBodySchema },
    multipartBody: completionFormSchema,
    limits: [ops.limits.send],
    before: [receiveFiles({ multipartOnly: false })],
    responses: {
      202: {
        description: 'Turn accepted',
        schema: queuedTurnSchema,
        headers: replayedHeaderSchema,
        links: {
          ...Object.fromEntries(
            ['getRun', 'streamRun', 'cancelRun'].map((operationId) => [
              operationId,
              {
                operationId,
                parameters: { chatId: '$response.body#/chatId', runId: '$response.body#/runId' },
              },
            ]),
          ),
          listMessages: { operationId: 'listMessages', parameters: { chatId: '$response.body#/chatId' } },
          // The next turn of the same chat: 409 RUN_ACTIVE while this one runs.
          sendTurn: { operationId: 'sendTurn', requestBody: { chatId: '$response.body#/chatId' } },
        },
      },
    },
    errors: [
      ...IDEMPOTENCY_ERRORS,
      'CHAT_NOT_FOUND',
      'ATTACHMENT_NOT_FOUND',
      'RUN_ACTIVE',
      'QUEUE_FULL',
      'ACTIVE_LIMIT',
      'LIMIT_REACHED',
    ],
    handler: async ({ body, headers }, req) =>
      replayable(
        202,
        await ops.runs.sendTurn(
          currentAuth(req),
          turnInput(body, { files: receivedFiles(req), traceparent: req.get('traceparent') }),
          headers['idempotency-key'],
        ),
      ),
  });

  routes.add({
    method: 'get',
    path: '/api/v1/runs',
    operationId: 'listRuns',
    summary: "List the caller's runs over all their chats, newest first; filter by status, time and metadata",
    tag: 'Runs',
    auth: 'apiKey',
    extension: true,
    request: { query: runListQuerySchema },
    responses: { 200: { description: 'One page of runs', schema: runListSchema } },
    errors: [],
    readsOnly: true,
    handler: async ({ query }, req) => ({
      status: 200,
      body: await ops.runs.listRuns(currentAuth(req), query),
    }),
  });

  routes.add({
    method: 'get',
    path: '/api/v1/chats/:chatId/runs',
    operationId: 'listChatRuns',
    summary: "List a chat's runs, newest first; filter by status, time and metadata",
    tag: 'Runs',
    auth: 'apiKey',
    extension: true,
    request: { params: chatParamsSchema, query: runListQuerySchema },
    responses: { 200: { description: 'One page of the chat’s runs', schema: runListSchema } },
    errors: ['CHAT_NOT_FOUND'],
    readsOnly: true,
    handler: async ({ params, query }, req) => ({
      status: 200,
      body: await ops.runs.listRuns(currentAuth(req), query, params.chatId),
    }),
  });

  routes.add({
    method: 'post',
    path: '/api/v1/chats/:chatId/messages/:messageId/regenerate',
    operationId: 'regenerateMessage',
    summary:
      "Answer the chat's latest user message again: a new run; the earlier answer stays listed (name the user message or an answer to it)",
    tag: 'Runs',
    auth: 'apiKey',
    extension: true,
    request: { params: messageParamsSchema, headers: idempotencyHeadersSchema, body: regenerateBodySchema },
    limits: [ops.limits.send],
    responses: {
      202: {
        description: 'The new run is accepted',
        schema: queuedTurnSchema,
        headers: replayedHeaderSchema,
        example: exampleRegeneratedTurn,
        links: Object.fromEntries(
          ['getRun', 'streamRun', 'cancelRun'].map((operationId) => [
            operationId,
            {
              operationId,
              parameters: { chatId: '$response.body#/chatId', runId: '$response.body#/runId' },
            },
          ]),
        ),
      },
    },
    errors: [
      ...IDEMPOTENCY_ERRORS,
      'CHAT_NOT_FOUND',
      'MESSAGE_NOT_FOUND',
      'NOT_LATEST_TURN',
      'RUN_ACTIVE',
      'ACTIVE_LIMIT',
      'LIMIT_REACHED',
    ],
    handler: async ({ params, headers, body }, req) =>
      replayable(
        202,
        await ops.runs.regenerate(
          currentAuth(req),
          {
            ...params,
            planMode: body.planMode,
            metadata: body.metadata,
            ...sendSettingsOf(body),
            traceparent: req.get('traceparent'),
          },
          headers['idempotency-key'],
        ),
      ),
  });

  routes.add({
    method: 'get',
    path: '/api/v1/chats/:chatId/runs/:runId',
    operationId: 'getRun',
    summary: 'Poll a run: status, partial text, tool calls, waitpoints and error',
    tag: 'Runs',
    auth: 'apiKey',
    request: { params: runParamsSchema },
    responses: {
      200: {
        description: 'Run snapshot',
        schema: runSnapshotSchema,
        links: {
          cancelRun: {
            operationId: 'cancelRun',
            parameters: { chatId: '$response.body#/chatId', runId: '$response.body#/id' },
          },
          completeWaitpoint: {
            operationId: 'completeWaitpoint',
            parameters: {
              chatId: '$response.body#/chatId',
              runId: '$response.body#/id',
              waitpointId: '$response.body#/waitpoints/0/id',
            },
          },
        },
      },
    },
    errors: ['CHAT_NOT_FOUND', 'RUN_NOT_FOUND'],
    readsOnly: true,
    // A poller sending back the ETag of an answer this gateway gave, for a run unchanged since,
    // is told 304 from memory: no read, and not counted against its key's limit (as GitHub does
    // for conditional requests), so polling a run fast costs next to nothing.
    shortcut: (req, res, next) => {
      const ifNoneMatch = req.get('if-none-match');
      const caller = ifNoneMatch ? ops.identity.rememberedCaller(bearerToken(req), 'rest') : undefined;
      const ids = caller ? runParamsSchema.safeParse(req.params) : undefined;
      const etag = caller && ids?.success ? ops.runs.unchangedRun(caller, ids.data) : undefined;
      if (!ifNoneMatch || !etag || !noneMatch(ifNoneMatch, etag)) return next();
      res.setHeader('etag', etag);
      res.status(304).end();
    },
    handler: async ({ params }, req) => {
      const { snapshot, etag } = await ops.runs.pollRun(currentAuth(req), params);
      return { status: 200, body: snapshot, headers: { etag } };
    },
  });

  routes.add({
    method: 'get',
    path: '/api/v1/chats/:chatId/runs/:runId/events',
    operationId: 'streamRun',
    summary:
      'Follow a run live (Server-Sent Events): the snapshot, then each change, until its terminal status; `Last-Event-ID` resumes',
    tag: 'Runs',
    auth: 'apiKey',
    extension: true,
    request: { params: runParamsSchema, headers: streamHeadersSchema },
    responses: {
      200: { description: 'The event stream', mediaType: 'text/event-stream', schema: runStreamEventSchema },
    },
    errors: ['CHAT_NOT_FOUND', 'RUN_NOT_FOUND', 'ACTIVE_LIMIT', 'SERVICE_UNAVAILABLE'],
    handler: ({ params, headers }, req, res) =>
      sendEventStream(res, (signal) =>
        ops.runs.streamRun(currentAuth(req), params, { after: headers['last-event-id'], signal }),
      ),
  });

  // Named only inside the chat stream's event schema (its `snapshot` event's contentSchema).
  routes.registry.register('ChatSnapshot', chatSnapshotSchema);
  routes.add({
    method: 'get',
    path: '/api/v1/chats/:chatId/events',
    operationId: 'streamChat',
    summary:
      'Follow a chat live (Server-Sent Events): its unfinished runs, then every event of each of its runs (queued, started, streamed, ended) in order; `Last-Event-ID` resumes',
    tag: 'Runs',
    auth: 'apiKey',
    extension: true,
    request: { params: chatParamsSchema, headers: streamHeadersSchema },
    responses: {
      200: { description: 'The event stream', mediaType: 'text/event-stream', schema: chatStreamEventSchema },
    },
    errors: ['CHAT_NOT_FOUND', 'ACTIVE_LIMIT', 'SERVICE_UNAVAILABLE'],
    handler: ({ params, headers }, req, res) =>
      sendEventStream(res, (signal) =>
        ops.runs.streamChat(currentAuth(req), params.chatId, { after: headers['last-event-id'], signal }),
      ),
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
    responses: {
      202: {
        description: 'The cancel is recorded (cancelRequestedAt): the run ends CANCELLED within moments',
        schema: runSnapshotSchema,
      },
    },
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
      'PLAN_CHANGED',
    ],
    handler: async ({ params, body }, req) => ({
      status: 202,
      body: await ops.runs.decidePlan(currentAuth(req), params, body),
    }),
  });
}
