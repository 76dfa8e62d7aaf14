import {
  chatListQuerySchema,
  chatListSchema,
  chatParamsSchema,
  chatSchema,
  createChatSchema,
  forkChatSchema,
  messageListQuerySchema,
  messageListSchema,
  updateChatSchema,
} from '../../../core/schemas/chats';
import { exampleForkedChat } from '../../../core/schemas/examples';
import type { Operations } from '../../../operations';
import { currentAuth } from '../http/auth-context';
import type { RouteTable } from '../http/route-table';

export function registerChatsRoutes(routes: RouteTable, ops: Operations): void {
  routes.add({
    method: 'post',
    path: '/api/v1/chats',
    operationId: 'createChat',
    summary: 'Create an empty chat',
    tag: 'Chats',
    auth: 'apiKey',
    request: { body: createChatSchema },
    responses: {
      201: {
        description: 'Chat created',
        schema: chatSchema,
        links: {
          ...Object.fromEntries(
            ['getChat', 'updateChat', 'listMessages', 'deleteChat'].map((operationId) => [
              operationId,
              { operationId, parameters: { chatId: '$response.body#/id' } },
            ]),
          ),
          sendTurn: { operationId: 'sendTurn', requestBody: { chatId: '$response.body#/id' } },
        },
      },
    },
    errors: [],
    handler: async ({ body }, req) => ({
      status: 201,
      body: await ops.chats.createChat(currentAuth(req), body),
    }),
  });

  routes.add({
    method: 'get',
    path: '/api/v1/chats',
    operationId: 'listChats',
    summary: 'List chats, newest activity first',
    tag: 'Chats',
    auth: 'apiKey',
    request: { query: chatListQuerySchema },
    responses: { 200: { description: 'One page of chats', schema: chatListSchema } },
    errors: [],
    handler: async ({ query }, req) => ({
      status: 200,
      body: await ops.chats.listChats(currentAuth(req), query),
    }),
  });

  routes.add({
    method: 'get',
    path: '/api/v1/chats/:chatId',
    operationId: 'getChat',
    summary: 'Get one chat',
    tag: 'Chats',
    auth: 'apiKey',
    request: { params: chatParamsSchema },
    responses: { 200: { description: 'The chat', schema: chatSchema } },
    errors: ['CHAT_NOT_FOUND'],
    handler: async ({ params }, req) => ({
      status: 200,
      body: await ops.chats.getChat(currentAuth(req), params.chatId),
    }),
  });

  routes.add({
    method: 'patch',
    path: '/api/v1/chats/:chatId',
    operationId: 'updateChat',
    summary: 'Rename a chat or mark it favorite',
    tag: 'Chats',
    auth: 'apiKey',
    extension: true,
    request: { params: chatParamsSchema, body: updateChatSchema },
    responses: { 200: { description: 'The updated chat', schema: chatSchema } },
    errors: ['CHAT_NOT_FOUND'],
    handler: async ({ params, body }, req) => ({
      status: 200,
      body: await ops.chats.updateChat(currentAuth(req), params.chatId, body),
    }),
  });

  routes.add({
    method: 'delete',
    path: '/api/v1/chats/:chatId',
    operationId: 'deleteChat',
    summary: 'Delete a chat (soft delete); it disappears from every route',
    tag: 'Chats',
    auth: 'apiKey',
    request: { params: chatParamsSchema },
    responses: { 204: { description: 'Deleted' } },
    errors: ['CHAT_NOT_FOUND'],
    handler: async ({ params }, req) => {
      await ops.chats.deleteChat(currentAuth(req), params.chatId);
      return { status: 204 };
    },
  });

  routes.add({
    method: 'get',
    path: '/api/v1/chats/:chatId/messages',
    operationId: 'listMessages',
    summary: 'List the messages of a chat, oldest first (or newest first with `order=desc`)',
    tag: 'Chats',
    auth: 'apiKey',
    request: { params: chatParamsSchema, query: messageListQuerySchema },
    responses: { 200: { description: 'One page of messages', schema: messageListSchema } },
    errors: ['CHAT_NOT_FOUND'],
    handler: async ({ params, query }, req) => ({
      status: 200,
      body: await ops.chats.listMessages(currentAuth(req), params.chatId, query),
    }),
  });

  routes.add({
    method: 'post',
    path: '/api/v1/chats/:chatId/fork',
    operationId: 'forkChat',
    summary:
      'Fork a chat at a message: a new chat with the history up to and including it; stored files shared, not copied',
    tag: 'Chats',
    auth: 'apiKey',
    extension: true,
    request: { params: chatParamsSchema, body: forkChatSchema },
    responses: {
      201: {
        description: 'The new chat',
        schema: chatSchema,
        example: exampleForkedChat,
        links: {
          ...Object.fromEntries(
            ['getChat', 'listMessages'].map((operationId) => [
              operationId,
              { operationId, parameters: { chatId: '$response.body#/id' } },
            ]),
          ),
          sendTurn: { operationId: 'sendTurn', requestBody: { chatId: '$response.body#/id' } },
        },
      },
    },
    errors: ['CHAT_NOT_FOUND', 'MESSAGE_NOT_FOUND'],
    handler: async ({ params, body }, req) => ({
      status: 201,
      body: await ops.chats.forkChat(currentAuth(req), params.chatId, body),
    }),
  });
}
