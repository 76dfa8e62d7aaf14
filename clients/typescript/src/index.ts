// The client runs in Node and in browsers; webhook verification (node:crypto) is Node's alone, and
// `@agent-chat/client/ai-sdk` (the AI SDK's chat transport) imports the client without it.
export * from './client.js';
export { verifyWebhook } from './webhooks.js';
