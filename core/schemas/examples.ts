/**
 * The OpenAPI document's examples, one coherent story (a user, a chat, a plan-mode turn, a crop),
 * so the ids an example answer names are the ids the next example request uses. The schemas give
 * them to `.openapi({ example })`; test/gateway/openapi-examples.test.ts checks each against its
 * schema. Plain data only: every schema file imports this one.
 */

const USER_ID = '0b3c7a1e-5f2d-4c8a-9e61-2d7f4b9a0c13';
const CHAT_ID = '3f6a2b8c-1d4e-4f70-8a93-5c2e7b1d9f04';
const MESSAGE_ID = '8d1e4c7a-2b5f-4e90-a3c6-7f0b2d5e8a19';
const ASSISTANT_MESSAGE_ID = 'c4a9e2f7-6b1d-4a38-9f05-1e8c3b7d2a60';
const RUN_ID = '5e7b1c9d-3a2f-4d86-b0e4-9c1a6f3e8d27';
const WAITPOINT_ID = 'a2d8f5c1-7e4b-4c09-8b36-0f9e2a5d7c41';
const TOOL_CALL_ID = 'e9c3a7b2-4d1f-4b65-8e20-3a7f1c9d5b84';
const ATTACHMENT_ID = '6b4f9d2e-8c3a-4e17-9d52-4b8e1f6a3c05';
const API_KEY_ID = 'f1a7c3e9-2b6d-4f48-a0c5-8e3b7d1f9a26';
const ENDPOINT_ID = '9c5e1a8f-4b7d-4a23-8f61-2c9e5b3a7d08';
const DELIVERY_ID = 'd7b2e6a4-9f1c-4d85-b3e0-5a8c2f4e1b97';
const GRANT_ID = '2e8a4c6f-1b9d-4e37-a5f2-7c3e9b1d6a54';
const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const PROCESS_ID = '0195a3c2-7d4e-7b81-9f3a-6c2e8d1b5a47';
const REGENERATED_RUN_ID = '7a3d9e1b-5c8f-4b26-a1e4-6d0f3b8c2e95';
const REGENERATED_ANSWER_ID = 'b8e2f4a6-3c1d-4e79-8a05-9d7c1e3b5f28';
const FORKED_CHAT_ID = '1c9f5e3a-8b2d-4a64-9e17-3f6b0d8a2c51';

const CREATED_AT = '2026-11-23T09:30:00.000Z';
const STARTED_AT = '2026-11-23T09:30:00.412Z';
const FINISHED_AT = '2026-11-23T09:30:21.050Z';

export const EXAMPLE_IDEMPOTENCY_KEY = '6f1c9a2e-8d4b-4c3e-9f7a-2b5d8e1c4a90';
const CROPPED_URL = `https://files.example.com/files/tools/${TOOL_CALL_ID}/lighthouse-crop.png?exp=1795600000&sig=Qm9vdHN0cmFw`;
const UPLOAD_URL = `https://files.example.com/files/uploads/${ATTACHMENT_ID}/lighthouse.jpg?exp=1795600000&sig=c2lnbmF0dXJl`;

export const exampleUser = {
  id: USER_ID,
  email: 'ada@example.com',
  createdAt: '2026-11-01T08:00:00.000Z',
  creditBalance: '99',
};

export const exampleCredentials = { email: 'ada@example.com', password: 'correct horse battery' };

export const exampleApiKey = {
  id: API_KEY_ID,
  name: 'deploy script',
  prefix: 'svck_live_Xq7f',
  lastUsedAt: STARTED_AT,
  createdAt: '2026-11-01T08:05:00.000Z',
};
export const exampleCreatedApiKey = {
  ...exampleApiKey,
  lastUsedAt: null,
  key: 'svck_live_Xq7fT2mB9cLw4rN8pK1sV6yH3dJ0gZ5eA7uQ2iO9tRb',
};

export const exampleOAuthGrant = {
  id: GRANT_ID,
  clientId: 'mcp-client-7Yb3kQ',
  clientName: 'Desktop assistant',
  lastUsedAt: STARTED_AT,
  createdAt: '2026-11-02T10:00:00.000Z',
};

export const exampleChat = {
  id: CHAT_ID,
  title: 'Crop the lighthouse photo',
  isFavorite: false,
  lastMessageAt: CREATED_AT,
  lastMessageId: MESSAGE_ID,
  settings: { model: 'claude', maxSteps: 4 },
  createdAt: CREATED_AT,
  updatedAt: CREATED_AT,
};

export const exampleAttachment = {
  id: ATTACHMENT_ID,
  filename: 'lighthouse.jpg',
  mimeType: 'image/jpeg',
  status: 'ready',
  url: UPLOAD_URL,
};

/** A send's metadata: the client's own tags, shown back on the run and filtered on in the lists. */
export const exampleMetadata = { customer: 'acme', ticket: 'T-1042' };

export const exampleCompletionRequest = {
  text: 'Crop the lighthouse out of this photo.',
  chatId: CHAT_ID,
  attachmentIds: [ATTACHMENT_ID],
  planMode: true,
  model: 'claude',
  tools: ['crop_image' as const],
  budget: { maxCredits: '5', maxToolCalls: 2 },
  metadata: exampleMetadata,
};

export const exampleCompletionForm = {
  text: 'Crop the lighthouse out of this photo.',
  planMode: 'true' as const,
  file: ['<binary: lighthouse.jpg>'],
};

export const exampleQueuedTurn = {
  chatId: CHAT_ID,
  messageId: MESSAGE_ID,
  runId: RUN_ID,
  triggerRunId: null,
  status: 'queued' as const,
  queuePosition: null,
};

export const exampleCropInput = {
  attachmentId: ATTACHMENT_ID,
  x_percent: 25,
  y_percent: 10,
  width_percent: 50,
  height_percent: 80,
};

export const exampleAiImageInput = {
  prompt: 'A lighthouse at dusk, watercolour',
  aspect_ratio: '16:9' as const,
  seed: 42,
};

export const exampleMergeVideosInput = {
  video_urls: ['https://media.example.com/clips/intro.mp4', 'https://media.example.com/clips/main.mp4'],
  transition: 'fade' as const,
  transition_duration: 0.5,
};

export const exampleToolResult = {
  toolName: 'crop_image',
  output: { url: CROPPED_URL, provider: 'sharp', width: 2016, height: 2419 },
  assets: [{ url: CROPPED_URL, mimeType: 'image/png', filename: 'lighthouse-crop.png' }],
  creditCost: '1',
  durationMs: 840,
  providerRunId: `sharp-${TOOL_CALL_ID}`,
};

const plan = {
  summary: 'Crop the lighthouse from the uploaded photo.',
  steps: [
    {
      toolName: 'crop_image',
      input: exampleCropInput,
      reason: 'The lighthouse fills the middle half of the frame.',
      credits: '1',
    },
  ],
  totalCredits: '1',
};

export const exampleWaitpoint = {
  id: WAITPOINT_ID,
  type: 'PLAN_APPROVAL' as const,
  status: 'APPROVED' as const,
  plan,
  planHash: '9f2c4b1e0d7a6c5b4a3928170f6e5d4c3b2a19087f6e5d4c3b2a190807f6e5d4',
  feedback: null,
  createdAt: '2026-11-23T09:30:03.200Z',
  resolvedAt: '2026-11-23T09:30:15.000Z',
  decidedBy: { userId: USER_ID, apiKeyId: API_KEY_ID, sessionId: null, via: 'rest' },
  decidedAt: '2026-11-23T09:30:15.000Z',
};

export const examplePendingWaitpoint = {
  ...exampleWaitpoint,
  status: 'PENDING' as const,
  resolvedAt: null,
  decidedBy: null,
  decidedAt: null,
};

export const exampleWaitpointDecision = { approved: true, planHash: exampleWaitpoint.planHash };

export const exampleActiveRun = {
  id: RUN_ID,
  chatId: CHAT_ID,
  status: 'WAITING' as const,
  waitpoint: examplePendingWaitpoint,
  links: {
    poll: `/api/v1/chats/${CHAT_ID}/runs/${RUN_ID}`,
    stream: `/api/v1/chats/${CHAT_ID}/runs/${RUN_ID}/events`,
    cancel: `/api/v1/chats/${CHAT_ID}/runs/${RUN_ID}/cancel`,
    decide: `/api/v1/chats/${CHAT_ID}/runs/${RUN_ID}/waitpoints/${WAITPOINT_ID}/complete`,
  },
};

export const exampleRunWebhook = {
  deliveryId: DELIVERY_ID,
  event: 'agent.completed' as const,
  envelopeId: `wh:${ENDPOINT_ID}:agent.completed:${RUN_ID}`,
  endpointId: ENDPOINT_ID,
  toolCallId: null,
  status: 'DELIVERED' as const,
  attempts: 1,
  lastAttemptAt: '2026-11-23T09:30:21.300Z',
  lastStatusCode: 200,
  deliveredAt: '2026-11-23T09:30:21.310Z',
};

const exampleUsage = {
  inputTokens: 1843,
  outputTokens: 96,
  cachedInputTokens: 1024,
  steps: 2,
  credits: '1.0048',
  compacted: false,
};

/** The run as the runs lists show it. */
export const exampleRunSummary = {
  id: RUN_ID,
  chatId: CHAT_ID,
  messageId: MESSAGE_ID,
  assistantMessageId: ASSISTANT_MESSAGE_ID,
  status: 'COMPLETE' as const,
  planMode: true,
  triggerRunId: PROCESS_ID,
  metadata: exampleMetadata,
  error: null,
  cancelRequestedAt: null,
  createdAt: CREATED_AT,
  startedAt: STARTED_AT,
  finishedAt: FINISHED_AT,
  updatedAt: FINISHED_AT,
};

export const exampleRunSnapshot = {
  ...exampleRunSummary,
  text: 'Here is the lighthouse, cropped.',
  currentStep: 2,
  activity: null,
  toolCalls: [
    {
      id: TOOL_CALL_ID,
      toolName: 'crop_image',
      status: 'SUCCEEDED' as const,
      input: exampleCropInput,
      result: exampleToolResult,
      error: null,
      startedAt: '2026-11-23T09:30:15.200Z',
      finishedAt: '2026-11-23T09:30:16.040Z',
    },
  ],
  waitpoints: [exampleWaitpoint],
  settings: {
    model: 'claude',
    instructions:
      'You are an assistant that works with media. Use the tools crop_image, ai_image_2 and merge_videos when the user asks for them; otherwise answer briefly.',
    maxSteps: 8,
    tools: ['crop_image' as const],
    budget: { maxCredits: '5', maxToolCalls: 2 },
  },
  usage: exampleUsage,
  stepUsage: [
    {
      step: 1,
      model: 'claude',
      inputTokens: 1201,
      outputTokens: 58,
      cachedInputTokens: 1024,
      credits: '0.0023',
      compacted: false,
    },
    {
      step: 2,
      model: 'claude',
      inputTokens: 642,
      outputTokens: 38,
      cachedInputTokens: 0,
      credits: '0.0025',
      compacted: false,
    },
  ],
  webhooks: [exampleRunWebhook],
  waitingFor: null,
};

export const exampleRegenerateRequest = { metadata: { ...exampleMetadata, attempt: '2' } };

/** A regenerate's answer: a new run of the same user message. */
export const exampleRegeneratedTurn = {
  chatId: CHAT_ID,
  messageId: MESSAGE_ID,
  runId: REGENERATED_RUN_ID,
  triggerRunId: null,
  status: 'queued' as const,
  queuePosition: null,
};

export const exampleForkRequest = { messageId: ASSISTANT_MESSAGE_ID, title: 'Lighthouse crops, take two' };

/** A fork's answer: the new chat, its last message the copy of the one forked at. */
export const exampleForkedChat = {
  id: FORKED_CHAT_ID,
  title: 'Lighthouse crops, take two',
  isFavorite: false,
  lastMessageAt: FINISHED_AT,
  lastMessageId: '4d2b8f6e-1a9c-4e53-b7d0-8c5a3e1f9b62',
  settings: { model: 'claude', maxSteps: 4 },
  createdAt: '2026-11-23T10:02:00.000Z',
  updatedAt: '2026-11-23T10:02:00.000Z',
};

export const exampleMessage = {
  id: MESSAGE_ID,
  chatId: CHAT_ID,
  role: 'user' as const,
  runId: RUN_ID,
  contentBlocks: [
    { type: 'text' as const, text: 'Crop the lighthouse out of this photo.' },
    { type: 'image' as const, attachmentId: ATTACHMENT_ID, url: UPLOAD_URL },
  ],
  attachments: [exampleAttachment],
  replyTo: null,
  regeneratedFrom: null,
  createdAt: CREATED_AT,
};

/** An answer regenerated: it answers the same message as the one it replaced, and names it. */
export const exampleRegeneratedMessage = {
  id: REGENERATED_ANSWER_ID,
  chatId: CHAT_ID,
  role: 'assistant' as const,
  runId: REGENERATED_RUN_ID,
  contentBlocks: [{ type: 'text' as const, text: 'Here is the lighthouse again, cropped tighter.' }],
  attachments: [],
  replyTo: MESSAGE_ID,
  regeneratedFrom: ASSISTANT_MESSAGE_ID,
  createdAt: '2026-11-23T09:31:40.300Z',
};

export const exampleEndpoint = {
  id: ENDPOINT_ID,
  url: 'https://hooks.example.com/agent-chat',
  events: ['agent.completed' as const, 'agent.failed' as const],
  isActive: true,
  createdAt: '2026-11-01T08:10:00.000Z',
};
export const exampleCreatedEndpoint = {
  ...exampleEndpoint,
  secret: 'svcwhsec_4Tg8pLq2Zr7Wv1Nc5Hx9Kb3Jm6Yd0Fs',
};
export const exampleNewEndpoint = { url: exampleEndpoint.url, events: exampleEndpoint.events };

const signedContent = `1795000000.{"id":"wh:${ENDPOINT_ID}:agent.completed:${RUN_ID}","event":"agent.completed",…}`;
export const exampleDelivery = {
  id: DELIVERY_ID,
  event: 'agent.completed' as const,
  envelopeId: `wh:${ENDPOINT_ID}:agent.completed:${RUN_ID}`,
  status: 'DELIVERED' as const,
  createdAt: FINISHED_AT,
  deliveredAt: '2026-11-23T09:30:21.310Z',
  attempts: [
    {
      series: 1,
      attempt: 1,
      startedAt: '2026-11-23T09:30:21.100Z',
      durationMs: 210,
      statusCode: 200,
      error: null,
      responseBody: 'ok',
      signedContent,
      requestHeaders: {
        'content-type': 'application/json',
        'x-svc-event': 'agent.completed',
        'x-svc-timestamp': '1795000000',
        'x-svc-signature': 'sha256=5d41402abc4b2a76b9719d911017c592ae2c8d5c1a1f9b3c8c1e0b7b1a2c3d4e',
        'x-svc-delivery-id': DELIVERY_ID,
      },
    },
  ],
  attemptCount: 1,
};

export const exampleAgentEventData = {
  chatId: CHAT_ID,
  runId: RUN_ID,
  messageId: MESSAGE_ID,
  traceId: TRACE_ID,
  processId: PROCESS_ID,
  status: 'COMPLETE' as const,
  assistantMessageId: ASSISTANT_MESSAGE_ID,
  usage: exampleUsage,
  metadata: exampleMetadata,
};

export const exampleToolCompletedData = {
  ...exampleToolResult,
  toolCallId: TOOL_CALL_ID,
  chatId: CHAT_ID,
  runId: RUN_ID,
};

/** A page of `item`, as every list answers. */
export const examplePage = <T>(item: T) => ({ data: [item], nextCursor: null });
