// Generated from GET /api/v1/openapi.json; do not edit.
// Regenerate: UPDATE_CLIENT=1 npx mocha test/clients/typescript.test.ts
export interface paths {
  '/healthz': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Answers while the process is alive */
    get: operations['liveness'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/readyz': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Answers 200 when PostgreSQL and Temporal are reachable, else 503 naming what is down */
    get: operations['readiness'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/auth/sign-up': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Create an account (off when ALLOW_SIGN_UP=false) */
    post: operations['signUp'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/auth/sign-in': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Sign in; sets the svc_session cookie */
    post: operations['signIn'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/auth/sign-out': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** End the current session and clear its cookie */
    post: operations['signOut'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/auth/sign-out-everywhere': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** End every session of the signed-in user (all browsers and devices) and clear this cookie; revoke every OAuth grant, and every API key not created in this session */
    post: operations['signOutEverywhere'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/auth/session': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** The signed-in user */
    get: operations['getSession'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/keys': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Active API keys of the signed-in user, newest first; never the key itself */
    get: operations['listApiKeys'];
    put?: never;
    /** Create an API key; the full key is in this answer only */
    post: operations['createApiKey'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/keys/{keyId}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    post?: never;
    /** Revoke an API key; its next call gets 401 */
    delete: operations['revokeApiKey'];
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/oauth-grants': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** MCP clients connected by OAuth sign-in, newest first; never a token */
    get: operations['listOAuthGrants'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/oauth-grants/{grantId}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    post?: never;
    /** Revoke an MCP client's OAuth access; its tokens get 401 from the next call */
    delete: operations['revokeOAuthGrant'];
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/chats': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** List chats, newest activity first */
    get: operations['listChats'];
    put?: never;
    /** Create an empty chat */
    post: operations['createChat'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/chats/{chatId}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Get one chat */
    get: operations['getChat'];
    put?: never;
    post?: never;
    /** Delete a chat (soft delete); it disappears from every route */
    delete: operations['deleteChat'];
    options?: never;
    head?: never;
    /** Rename a chat or mark it favorite */
    patch: operations['updateChat'];
    trace?: never;
  };
  '/api/v1/chats/{chatId}/messages': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** List the messages of a chat, oldest first (or newest first with `order=desc`) */
    get: operations['listMessages'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/chats/{chatId}/fork': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Fork a chat at a message: a new chat with the history up to and including it; stored files shared, not copied */
    post: operations['forkChat'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/uploads': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Stores image, video or audio files and returns their attachment ids */
    post: operations['uploadFiles'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/files/{key}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Streams a stored file (byte ranges and conditional requests included); the URL (with its signature) comes from an attachment or a tool asset */
    get: operations['getFile'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/completions': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Queue a turn for the agent; creates the chat when chatId is omitted */
    post: operations['sendTurn'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/runs': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** List the caller's runs over all their chats, newest first; filter by status, time and metadata */
    get: operations['listRuns'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/chats/{chatId}/runs': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** List a chat's runs, newest first; filter by status, time and metadata */
    get: operations['listChatRuns'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/chats/{chatId}/messages/{messageId}/regenerate': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Answer the chat's latest user message again: a new run; the earlier answer stays listed (name the user message or an answer to it) */
    post: operations['regenerateMessage'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/chats/{chatId}/runs/{runId}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Poll a run: status, partial text, tool calls, waitpoints and error */
    get: operations['getRun'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/chats/{chatId}/runs/{runId}/events': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Follow a run live (Server-Sent Events): the snapshot, then each change, until its terminal status; `Last-Event-ID` resumes */
    get: operations['streamRun'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/chats/{chatId}/events': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Follow a chat live (Server-Sent Events): its unfinished runs, then every event of each of its runs (queued, started, streamed, ended) in order; `Last-Event-ID` resumes */
    get: operations['streamChat'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/chats/{chatId}/runs/{runId}/cancel': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Cancel an active run; it ends CANCELLED and agent.failed is sent */
    post: operations['cancelRun'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/chats/{chatId}/runs/{runId}/waitpoints/{waitpointId}/complete': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Approve or reject a plan waiting for approval */
    post: operations['completeWaitpoint'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/tools/crop_image': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Run crop_image and wait for its result (up to 5 minutes). */
    post: operations['tool_crop_image'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/tools/ai_image_2': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Run ai_image_2 and wait for its result (up to 5 minutes). */
    post: operations['tool_ai_image_2'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/tools/merge_videos': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Run merge_videos and wait for its result (up to 5 minutes). */
    post: operations['tool_merge_videos'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/webhook-endpoints': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Lists the endpoints, newest first; never their secrets */
    get: operations['listWebhookEndpoints'];
    put?: never;
    /** Registers an HTTPS endpoint for events; answers its signing secret, this once */
    post: operations['createWebhookEndpoint'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/webhook-endpoints/{endpointId}/rotate-secret': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** A new signing secret, answered this once; the old one keeps signing (x-svc-signature-previous) for overlapSeconds */
    post: operations['rotateWebhookSecret'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/webhook-endpoints/{endpointId}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    post?: never;
    /** Removes an endpoint; deliveries still in retry send nothing more */
    delete: operations['deleteWebhookEndpoint'];
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/webhook-endpoints/{endpointId}/deliveries': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** An endpoint's deliveries, newest first, each with its attempt log */
    get: operations['listWebhookDeliveries'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/webhook-deliveries/{deliveryId}/redeliver': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Sends a settled delivery again as a new series of up to 4 attempts */
    post: operations['redeliverWebhook'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/openapi.json': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** This OpenAPI 3.1 document */
    get: operations['getOpenApiDocument'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/docs': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Interactive API reference (HTML) over the OpenAPI document, served whole by this gateway */
    get: operations['getApiReference'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/docs/assets/{file}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** The reference page's scripts */
    get: operations['getApiReferenceAsset'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
}
export interface webhooks {
  'agent.started': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** agent.started, POSTed to each endpoint subscribed to it, signed with its secret */
    post: operations['webhook_agent_started'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  'agent.completed': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** agent.completed, POSTed to each endpoint subscribed to it, signed with its secret */
    post: operations['webhook_agent_completed'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  'agent.failed': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** agent.failed, POSTed to each endpoint subscribed to it, signed with its secret */
    post: operations['webhook_agent_failed'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  'tool.completed': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** tool.completed, POSTed to each endpoint subscribed to it, signed with its secret */
    post: operations['webhook_tool_completed'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
}
export interface components {
  schemas: {
    /**
     * @example {
     *       "id": "wh:9c5e1a8f-4b7d-4a23-8f61-2c9e5b3a7d08:agent.started:5e7b1c9d-3a2f-4d86-b0e4-9c1a6f3e8d27",
     *       "event": "agent.started",
     *       "createdAt": "2026-11-23T09:30:21.050Z",
     *       "data": {
     *         "chatId": "3f6a2b8c-1d4e-4f70-8a93-5c2e7b1d9f04",
     *         "runId": "5e7b1c9d-3a2f-4d86-b0e4-9c1a6f3e8d27",
     *         "messageId": "8d1e4c7a-2b5f-4e90-a3c6-7f0b2d5e8a19",
     *         "traceId": "4bf92f3577b34da6a3ce929d0e0e4736",
     *         "processId": "0195a3c2-7d4e-7b81-9f3a-6c2e8d1b5a47",
     *         "status": "QUEUED",
     *         "assistantMessageId": "c4a9e2f7-6b1d-4a38-9f05-1e8c3b7d2a60",
     *         "metadata": {
     *           "customer": "acme",
     *           "ticket": "T-1042"
     *         }
     *       }
     *     }
     */
    WebhookEnvelope_agent_started: {
      /** @description wh:{endpointId}:{event}:{runId or toolCallId}: dedupe on it. */
      id: string;
      /** @enum {string} */
      event: 'agent.started';
      /** Format: date-time */
      createdAt: string;
      data: components['schemas']['AgentEventData'];
    };
    /**
     * @example {
     *       "chatId": "3f6a2b8c-1d4e-4f70-8a93-5c2e7b1d9f04",
     *       "runId": "5e7b1c9d-3a2f-4d86-b0e4-9c1a6f3e8d27",
     *       "messageId": "8d1e4c7a-2b5f-4e90-a3c6-7f0b2d5e8a19",
     *       "traceId": "4bf92f3577b34da6a3ce929d0e0e4736",
     *       "processId": "0195a3c2-7d4e-7b81-9f3a-6c2e8d1b5a47",
     *       "status": "COMPLETE",
     *       "assistantMessageId": "c4a9e2f7-6b1d-4a38-9f05-1e8c3b7d2a60",
     *       "usage": {
     *         "inputTokens": 1843,
     *         "outputTokens": 96,
     *         "cachedInputTokens": 1024,
     *         "steps": 2,
     *         "credits": "1.0048",
     *         "compacted": false
     *       },
     *       "metadata": {
     *         "customer": "acme",
     *         "ticket": "T-1042"
     *       }
     *     }
     */
    AgentEventData: {
      chatId: string;
      runId: string;
      messageId: string;
      /** @description The W3C trace id of the admitting request. */
      traceId: string;
      /** @description The Temporal workflow run id. */
      processId: string;
      /** @enum {string} */
      status: 'QUEUED' | 'COMPLETE' | 'FAILED' | 'CANCELLED';
      assistantMessageId: string;
      /** @description Why a turn FAILED. */
      error?: string;
      usage?: components['schemas']['RunUsage'];
      /**
       * @description The send's metadata (extension); left out when it has none.
       * @example {
       *       "customer": "acme",
       *       "ticket": "T-1042"
       *     }
       */
      metadata?: {
        [key: string]: string;
      };
    };
    /** @description agent.completed and agent.failed: the run's tokens and credits (an extension). */
    RunUsage: {
      /** @description Input tokens, as the providers counted them; cached included. */
      inputTokens: number;
      outputTokens: number;
      /** @description Input tokens read from the provider’s cache. */
      cachedInputTokens: number;
      /** @description Credits charged: model steps and tools together, a decimal string. */
      credits: string;
      /** @description Whether a summary of the chat’s older turns was written. */
      compacted: boolean;
      /** @description Model steps the run took. */
      steps: number;
    };
    /**
     * @example {
     *       "id": "wh:9c5e1a8f-4b7d-4a23-8f61-2c9e5b3a7d08:agent.completed:5e7b1c9d-3a2f-4d86-b0e4-9c1a6f3e8d27",
     *       "event": "agent.completed",
     *       "createdAt": "2026-11-23T09:30:21.050Z",
     *       "data": {
     *         "chatId": "3f6a2b8c-1d4e-4f70-8a93-5c2e7b1d9f04",
     *         "runId": "5e7b1c9d-3a2f-4d86-b0e4-9c1a6f3e8d27",
     *         "messageId": "8d1e4c7a-2b5f-4e90-a3c6-7f0b2d5e8a19",
     *         "traceId": "4bf92f3577b34da6a3ce929d0e0e4736",
     *         "processId": "0195a3c2-7d4e-7b81-9f3a-6c2e8d1b5a47",
     *         "status": "COMPLETE",
     *         "assistantMessageId": "c4a9e2f7-6b1d-4a38-9f05-1e8c3b7d2a60",
     *         "usage": {
     *           "inputTokens": 1843,
     *           "outputTokens": 96,
     *           "cachedInputTokens": 1024,
     *           "steps": 2,
     *           "credits": "1.0048",
     *           "compacted": false
     *         },
     *         "metadata": {
     *           "customer": "acme",
     *           "ticket": "T-1042"
     *         }
     *       }
     *     }
     */
    WebhookEnvelope_agent_completed: {
      /** @description wh:{endpointId}:{event}:{runId or toolCallId}: dedupe on it. */
      id: string;
      /** @enum {string} */
      event: 'agent.completed';
      /** Format: date-time */
      createdAt: string;
      data: components['schemas']['AgentEventData'];
    };
    /**
     * @example {
     *       "id": "wh:9c5e1a8f-4b7d-4a23-8f61-2c9e5b3a7d08:agent.failed:5e7b1c9d-3a2f-4d86-b0e4-9c1a6f3e8d27",
     *       "event": "agent.failed",
     *       "createdAt": "2026-11-23T09:30:21.050Z",
     *       "data": {
     *         "chatId": "3f6a2b8c-1d4e-4f70-8a93-5c2e7b1d9f04",
     *         "runId": "5e7b1c9d-3a2f-4d86-b0e4-9c1a6f3e8d27",
     *         "messageId": "8d1e4c7a-2b5f-4e90-a3c6-7f0b2d5e8a19",
     *         "traceId": "4bf92f3577b34da6a3ce929d0e0e4736",
     *         "processId": "0195a3c2-7d4e-7b81-9f3a-6c2e8d1b5a47",
     *         "status": "FAILED",
     *         "assistantMessageId": "c4a9e2f7-6b1d-4a38-9f05-1e8c3b7d2a60",
     *         "usage": {
     *           "inputTokens": 1843,
     *           "outputTokens": 96,
     *           "cachedInputTokens": 1024,
     *           "steps": 2,
     *           "credits": "1.0048",
     *           "compacted": false
     *         },
     *         "metadata": {
     *           "customer": "acme",
     *           "ticket": "T-1042"
     *         }
     *       }
     *     }
     */
    WebhookEnvelope_agent_failed: {
      /** @description wh:{endpointId}:{event}:{runId or toolCallId}: dedupe on it. */
      id: string;
      /** @enum {string} */
      event: 'agent.failed';
      /** Format: date-time */
      createdAt: string;
      data: components['schemas']['AgentEventData'];
    };
    /**
     * @example {
     *       "id": "wh:9c5e1a8f-4b7d-4a23-8f61-2c9e5b3a7d08:tool.completed:e9c3a7b2-4d1f-4b65-8e20-3a7f1c9d5b84",
     *       "event": "tool.completed",
     *       "createdAt": "2026-11-23T09:30:21.050Z",
     *       "data": {
     *         "toolName": "crop_image",
     *         "output": {
     *           "url": "https://files.example.com/files/tools/e9c3a7b2-4d1f-4b65-8e20-3a7f1c9d5b84/lighthouse-crop.png?exp=1795600000&sig=Qm9vdHN0cmFw",
     *           "provider": "sharp",
     *           "width": 2016,
     *           "height": 2419
     *         },
     *         "assets": [
     *           {
     *             "url": "https://files.example.com/files/tools/e9c3a7b2-4d1f-4b65-8e20-3a7f1c9d5b84/lighthouse-crop.png?exp=1795600000&sig=Qm9vdHN0cmFw",
     *             "mimeType": "image/png",
     *             "filename": "lighthouse-crop.png"
     *           }
     *         ],
     *         "creditCost": "1",
     *         "durationMs": 840,
     *         "providerRunId": "sharp-e9c3a7b2-4d1f-4b65-8e20-3a7f1c9d5b84",
     *         "toolCallId": "e9c3a7b2-4d1f-4b65-8e20-3a7f1c9d5b84",
     *         "chatId": "3f6a2b8c-1d4e-4f70-8a93-5c2e7b1d9f04",
     *         "runId": "5e7b1c9d-3a2f-4d86-b0e4-9c1a6f3e8d27"
     *       }
     *     }
     */
    WebhookEnvelope_tool_completed: {
      /** @description wh:{endpointId}:{event}:{runId or toolCallId}: dedupe on it. */
      id: string;
      /** @enum {string} */
      event: 'tool.completed';
      /** Format: date-time */
      createdAt: string;
      data: components['schemas']['ToolCompletedData'];
    };
    /**
     * @example {
     *       "toolName": "crop_image",
     *       "output": {
     *         "url": "https://files.example.com/files/tools/e9c3a7b2-4d1f-4b65-8e20-3a7f1c9d5b84/lighthouse-crop.png?exp=1795600000&sig=Qm9vdHN0cmFw",
     *         "provider": "sharp",
     *         "width": 2016,
     *         "height": 2419
     *       },
     *       "assets": [
     *         {
     *           "url": "https://files.example.com/files/tools/e9c3a7b2-4d1f-4b65-8e20-3a7f1c9d5b84/lighthouse-crop.png?exp=1795600000&sig=Qm9vdHN0cmFw",
     *           "mimeType": "image/png",
     *           "filename": "lighthouse-crop.png"
     *         }
     *       ],
     *       "creditCost": "1",
     *       "durationMs": 840,
     *       "providerRunId": "sharp-e9c3a7b2-4d1f-4b65-8e20-3a7f1c9d5b84",
     *       "toolCallId": "e9c3a7b2-4d1f-4b65-8e20-3a7f1c9d5b84",
     *       "chatId": "3f6a2b8c-1d4e-4f70-8a93-5c2e7b1d9f04",
     *       "runId": "5e7b1c9d-3a2f-4d86-b0e4-9c1a6f3e8d27"
     *     }
     */
    ToolCompletedData: components['schemas']['ToolResult'] & {
      toolCallId: string;
      chatId?: string;
      runId?: string;
    };
    /**
     * @example {
     *       "url": "https://files.example.com/files/tools/e9c3a7b2-4d1f-4b65-8e20-3a7f1c9d5b84/lighthouse-crop.png?exp=1795600000&sig=Qm9vdHN0cmFw",
     *       "mimeType": "image/png",
     *       "filename": "lighthouse-crop.png"
     *     }
     */
    ToolAsset: {
      url: string;
      mimeType: string;
      filename?: string;
    };
    /**
     * @example {
     *       "toolName": "crop_image",
     *       "output": {
     *         "url": "https://files.example.com/files/tools/e9c3a7b2-4d1f-4b65-8e20-3a7f1c9d5b84/lighthouse-crop.png?exp=1795600000&sig=Qm9vdHN0cmFw",
     *         "provider": "sharp",
     *         "width": 2016,
     *         "height": 2419
     *       },
     *       "assets": [
     *         {
     *           "url": "https://files.example.com/files/tools/e9c3a7b2-4d1f-4b65-8e20-3a7f1c9d5b84/lighthouse-crop.png?exp=1795600000&sig=Qm9vdHN0cmFw",
     *           "mimeType": "image/png",
     *           "filename": "lighthouse-crop.png"
     *         }
     *       ],
     *       "creditCost": "1",
     *       "durationMs": 840,
     *       "providerRunId": "sharp-e9c3a7b2-4d1f-4b65-8e20-3a7f1c9d5b84"
     *     }
     */
    ToolResult: {
      toolName: string;
      /** @description Provider output; always the result URL and the provider that made it. */
      output: {
        url: string;
        provider: string;
      } & {
        [key: string]: unknown;
      };
      assets: components['schemas']['ToolAsset'][];
      /** @description Credits charged for this call, a decimal string. */
      creditCost: string;
      durationMs: number;
      providerRunId: string;
    };
    ChatSnapshot: {
      /** Format: uuid */
      chatId: string;
      /** @description The chat's unfinished runs: its active run first, then its queue in order. */
      runs: components['schemas']['RunSnapshot'][];
    };
    /**
     * @example {
     *       "id": "5e7b1c9d-3a2f-4d86-b0e4-9c1a6f3e8d27",
     *       "chatId": "3f6a2b8c-1d4e-4f70-8a93-5c2e7b1d9f04",
     *       "messageId": "8d1e4c7a-2b5f-4e90-a3c6-7f0b2d5e8a19",
     *       "assistantMessageId": "c4a9e2f7-6b1d-4a38-9f05-1e8c3b7d2a60",
     *       "status": "COMPLETE",
     *       "planMode": true,
     *       "triggerRunId": "0195a3c2-7d4e-7b81-9f3a-6c2e8d1b5a47",
     *       "metadata": {
     *         "customer": "acme",
     *         "ticket": "T-1042"
     *       },
     *       "error": null,
     *       "cancelRequestedAt": null,
     *       "createdAt": "2026-11-23T09:30:00.000Z",
     *       "startedAt": "2026-11-23T09:30:00.412Z",
     *       "finishedAt": "2026-11-23T09:30:21.050Z",
     *       "updatedAt": "2026-11-23T09:30:21.050Z",
     *       "text": "Here is the lighthouse, cropped.",
     *       "currentStep": 2,
     *       "activity": null,
     *       "toolCalls": [
     *         {
     *           "id": "e9c3a7b2-4d1f-4b65-8e20-3a7f1c9d5b84",
     *           "toolName": "crop_image",
     *           "status": "SUCCEEDED",
     *           "input": {
     *             "attachmentId": "6b4f9d2e-8c3a-4e17-9d52-4b8e1f6a3c05",
     *             "x_percent": 25,
     *             "y_percent": 10,
     *             "width_percent": 50,
     *             "height_percent": 80
     *           },
     *           "result": {
     *             "toolName": "crop_image",
     *             "output": {
     *               "url": "https://files.example.com/files/tools/e9c3a7b2-4d1f-4b65-8e20-3a7f1c9d5b84/lighthouse-crop.png?exp=1795600000&sig=Qm9vdHN0cmFw",
     *               "provider": "sharp",
     *               "width": 2016,
     *               "height": 2419
     *             },
     *             "assets": [
     *               {
     *                 "url": "https://files.example.com/files/tools/e9c3a7b2-4d1f-4b65-8e20-3a7f1c9d5b84/lighthouse-crop.png?exp=1795600000&sig=Qm9vdHN0cmFw",
     *                 "mimeType": "image/png",
     *                 "filename": "lighthouse-crop.png"
     *               }
     *             ],
     *             "creditCost": "1",
     *             "durationMs": 840,
     *             "providerRunId": "sharp-e9c3a7b2-4d1f-4b65-8e20-3a7f1c9d5b84"
     *           },
     *           "error": null,
     *           "startedAt": "2026-11-23T09:30:15.200Z",
     *           "finishedAt": "2026-11-23T09:30:16.040Z"
     *         }
     *       ],
     *       "waitpoints": [
     *         {
     *           "id": "a2d8f5c1-7e4b-4c09-8b36-0f9e2a5d7c41",
     *           "type": "PLAN_APPROVAL",
     *           "status": "APPROVED",
     *           "plan": {
     *             "summary": "Crop the lighthouse from the uploaded photo.",
     *             "steps": [
     *               {
     *                 "toolName": "crop_image",
     *                 "input": {
     *                   "attachmentId": "6b4f9d2e-8c3a-4e17-9d52-4b8e1f6a3c05",
     *                   "x_percent": 25,
     *                   "y_percent": 10,
     *                   "width_percent": 50,
     *                   "height_percent": 80
     *                 },
     *                 "reason": "The lighthouse fills the middle half of the frame.",
     *                 "credits": "1"
     *               }
     *             ],
     *             "totalCredits": "1"
     *           },
     *           "planHash": "9f2c4b1e0d7a6c5b4a3928170f6e5d4c3b2a19087f6e5d4c3b2a190807f6e5d4",
     *           "feedback": null,
     *           "createdAt": "2026-11-23T09:30:03.200Z",
     *           "resolvedAt": "2026-11-23T09:30:15.000Z",
     *           "decidedBy": {
     *             "userId": "0b3c7a1e-5f2d-4c8a-9e61-2d7f4b9a0c13",
     *             "apiKeyId": "f1a7c3e9-2b6d-4f48-a0c5-8e3b7d1f9a26",
     *             "sessionId": null,
     *             "via": "rest"
     *           },
     *           "decidedAt": "2026-11-23T09:30:15.000Z"
     *         }
     *       ],
     *       "settings": {
     *         "model": "claude",
     *         "instructions": "You are an assistant that works with media. Use the tools crop_image, ai_image_2 and merge_videos when the user asks for them; otherwise answer briefly.",
     *         "maxSteps": 8,
     *         "tools": [
     *           "crop_image"
     *         ],
     *         "budget": {
     *           "maxCredits": "5",
     *           "maxToolCalls": 2
     *         }
     *       },
     *       "usage": {
     *         "inputTokens": 1843,
     *         "outputTokens": 96,
     *         "cachedInputTokens": 1024,
     *         "steps": 2,
     *         "credits": "1.0048",
     *         "compacted": false
     *       },
     *       "stepUsage": [
     *         {
     *           "step": 1,
     *           "model": "claude",
     *           "inputTokens": 1201,
     *           "outputTokens": 58,
     *           "cachedInputTokens": 1024,
     *           "credits": "0.0023",
     *           "compacted": false
     *         },
     *         {
     *           "step": 2,
     *           "model": "claude",
     *           "inputTokens": 642,
     *           "outputTokens": 38,
     *           "cachedInputTokens": 0,
     *           "credits": "0.0025",
     *           "compacted": false
     *         }
     *       ],
     *       "webhooks": [
     *         {
     *           "deliveryId": "d7b2e6a4-9f1c-4d85-b3e0-5a8c2f4e1b97",
     *           "event": "agent.completed",
     *           "envelopeId": "wh:9c5e1a8f-4b7d-4a23-8f61-2c9e5b3a7d08:agent.completed:5e7b1c9d-3a2f-4d86-b0e4-9c1a6f3e8d27",
     *           "endpointId": "9c5e1a8f-4b7d-4a23-8f61-2c9e5b3a7d08",
     *           "toolCallId": null,
     *           "status": "DELIVERED",
     *           "attempts": 1,
     *           "lastAttemptAt": "2026-11-23T09:30:21.300Z",
     *           "lastStatusCode": 200,
     *           "deliveredAt": "2026-11-23T09:30:21.310Z"
     *         }
     *       ],
     *       "waitingFor": null
     *     }
     */
    RunSnapshot: {
      /** Format: uuid */
      id: string;
      /** Format: uuid */
      chatId: string;
      /** Format: uuid */
      messageId: string;
      /** Format: uuid */
      assistantMessageId: string;
      /** @enum {string} */
      status: 'QUEUED' | 'RUNNING' | 'WAITING' | 'COMPLETE' | 'FAILED' | 'CANCELLED';
      planMode: boolean;
      triggerRunId: string | null;
      text: string;
      currentStep: number;
      /** @description What a live run is doing now, from its workflow ("model step 2", "waiting for plan approval", a tool's name); at most a second old; null before it starts and once it ends. */
      activity: string | null;
      toolCalls: components['schemas']['ToolCall'][];
      waitpoints: components['schemas']['Waitpoint'][];
      /** @description What the run used; null for a run admitted before settings existed. */
      settings: components['schemas']['RunSettings'] | null;
      usage: components['schemas']['RunUsage'];
      /** @description The run's usage per model step, oldest first (a step's compaction included). */
      stepUsage: components['schemas']['StepUsage'][];
      /** @description The run's webhook ledger: each event of the run (its agent events and its tool calls' tool.completed) to each of the user's endpoints subscribed to it, with the delivery's status and attempt count. Empty when the user has no endpoint for them. */
      webhooks: components['schemas']['RunWebhookDelivery'][];
      waitingFor: components['schemas']['WaitingFor'];
      error: string | null;
      /**
       * Format: date-time
       * @description When a cancel of the run was recorded (extension): from then on the run ends CANCELLED, whatever it was doing, and a plan still pending reads CANCELLED. Its status stays what it was until the run has stopped; wait for CANCELLED. Null when no cancel was asked for.
       */
      cancelRequestedAt: string | null;
      /**
       * @description Your own string pairs for the run (extension): at most 16 keys of 1–40 characters (no "="), values of at most 512 characters. Shown in the snapshot, the runs lists and the agent events, and filtered on with metadata[<key>]=<value>.
       * @example {
       *       "customer": "acme",
       *       "ticket": "T-1042"
       *     }
       */
      metadata: {
        [key: string]: string;
      };
      /** Format: date-time */
      createdAt: string;
      /** Format: date-time */
      startedAt: string | null;
      /** Format: date-time */
      finishedAt: string | null;
      /** Format: date-time */
      updatedAt: string;
    };
    ToolCall: {
      /** Format: uuid */
      id: string;
      toolName: string;
      /** @enum {string} */
      status: 'RUNNING' | 'SUCCEEDED' | 'FAILED';
      input?: unknown;
      result: components['schemas']['ToolResult'] | null;
      error: string | null;
      /** Format: date-time */
      startedAt: string;
      /** Format: date-time */
      finishedAt: string | null;
    };
    /**
     * @example {
     *       "id": "a2d8f5c1-7e4b-4c09-8b36-0f9e2a5d7c41",
     *       "type": "PLAN_APPROVAL",
     *       "status": "APPROVED",
     *       "plan": {
     *         "summary": "Crop the lighthouse from the uploaded photo.",
     *         "steps": [
     *           {
     *             "toolName": "crop_image",
     *             "input": {
     *               "attachmentId": "6b4f9d2e-8c3a-4e17-9d52-4b8e1f6a3c05",
     *               "x_percent": 25,
     *               "y_percent": 10,
     *               "width_percent": 50,
     *               "height_percent": 80
     *             },
     *             "reason": "The lighthouse fills the middle half of the frame.",
     *             "credits": "1"
     *           }
     *         ],
     *         "totalCredits": "1"
     *       },
     *       "planHash": "9f2c4b1e0d7a6c5b4a3928170f6e5d4c3b2a19087f6e5d4c3b2a190807f6e5d4",
     *       "feedback": null,
     *       "createdAt": "2026-11-23T09:30:03.200Z",
     *       "resolvedAt": "2026-11-23T09:30:15.000Z",
     *       "decidedBy": {
     *         "userId": "0b3c7a1e-5f2d-4c8a-9e61-2d7f4b9a0c13",
     *         "apiKeyId": "f1a7c3e9-2b6d-4f48-a0c5-8e3b7d1f9a26",
     *         "sessionId": null,
     *         "via": "rest"
     *       },
     *       "decidedAt": "2026-11-23T09:30:15.000Z"
     *     }
     */
    Waitpoint: {
      /** Format: uuid */
      id: string;
      /** @enum {string} */
      type: 'PLAN_APPROVAL';
      /** @enum {string} */
      status: 'PENDING' | 'APPROVED' | 'REJECTED' | 'EXPIRED' | 'CANCELLED';
      plan: {
        summary: string;
        steps: {
          toolName: string;
          input?: unknown;
          reason: string;
          /** @description What the step costs when it succeeds, in credits (the tool’s price), a decimal string. */
          credits?: string;
        }[];
        /** @description What the plan's steps cost together, in credits; the model steps after it are charged by their tokens. */
        totalCredits?: string;
      };
      /**
       * @description SHA-256 (hex) of the plan as served, in canonical JSON (object keys sorted, no spaces), as the waitpoint shows it.
       * @example 9f2c4b1e0d7a6c5b4a3928170f6e5d4c3b2a19087f6e5d4c3b2a190807f6e5d4
       */
      planHash: string;
      feedback: string | null;
      /** Format: date-time */
      createdAt: string;
      /** Format: date-time */
      resolvedAt: string | null;
      /** @description Who approved or rejected the plan; null while pending, and for an expired or cancelled plan. */
      decidedBy: {
        /** Format: uuid */
        userId: string;
        /**
         * Format: uuid
         * @description The API key the decision came with.
         */
        apiKeyId: string | null;
        /**
         * Format: uuid
         * @description The signed-in session it came with (the console).
         */
        sessionId: string | null;
        /**
         * @description The transport the decision came by.
         * @enum {string}
         */
        via: 'rest' | 'mcp' | 'console';
      } | null;
      /** Format: date-time */
      decidedAt: string | null;
    };
    /** @description What the run used: its send’s settings, else its chat’s defaults, else the operator’s. */
    RunSettings: {
      /** @description Null when the operator offers no model. */
      model: string | null;
      instructions: string;
      maxSteps: number;
      tools: ('crop_image' | 'ai_image_2' | 'merge_videos')[];
      /** @description The send's budget; null when it gave none. */
      budget: {
        maxCredits: string | null;
        maxToolCalls: number | null;
      } | null;
    };
    StepUsage: {
      step: number;
      model: string | null;
      /** @description Input tokens, as the providers counted them; cached included. */
      inputTokens: number;
      outputTokens: number;
      /** @description Input tokens read from the provider’s cache. */
      cachedInputTokens: number;
      /** @description Credits charged, a decimal string. */
      credits: string;
      /** @description Whether a summary of the chat’s older turns was written. */
      compacted: boolean;
    };
    /**
     * @example {
     *       "deliveryId": "d7b2e6a4-9f1c-4d85-b3e0-5a8c2f4e1b97",
     *       "event": "agent.completed",
     *       "envelopeId": "wh:9c5e1a8f-4b7d-4a23-8f61-2c9e5b3a7d08:agent.completed:5e7b1c9d-3a2f-4d86-b0e4-9c1a6f3e8d27",
     *       "endpointId": "9c5e1a8f-4b7d-4a23-8f61-2c9e5b3a7d08",
     *       "toolCallId": null,
     *       "status": "DELIVERED",
     *       "attempts": 1,
     *       "lastAttemptAt": "2026-11-23T09:30:21.300Z",
     *       "lastStatusCode": 200,
     *       "deliveredAt": "2026-11-23T09:30:21.310Z"
     *     }
     */
    RunWebhookDelivery: {
      /**
       * Format: uuid
       * @description Its attempt log: GET /api/webhook-endpoints/{endpointId}/deliveries.
       */
      deliveryId: string;
      /** @enum {string} */
      event: 'agent.started' | 'agent.completed' | 'agent.failed' | 'tool.completed';
      /** @description The envelope id the receiver sees. */
      envelopeId: string;
      /** Format: uuid */
      endpointId: string;
      /**
       * Format: uuid
       * @description For tool.completed: the tool call it announces.
       */
      toolCallId: string | null;
      /** @enum {string} */
      status: 'PENDING' | 'DELIVERED' | 'FAILED';
      /** @description Attempts made so far, over every redelivery. */
      attempts: number;
      /** Format: date-time */
      lastAttemptAt: string | null;
      /** @description The receiver's status on the last attempt; null when it did not answer. */
      lastStatusCode: number | null;
      /** Format: date-time */
      deliveredAt: string | null;
    };
    /** @description What the run waits for while it is not moving (extension): its plan's decision, a model provider's retry (a rate limit or an error), a slot among the user's running tool calls, or its place in the chat's queue. Null otherwise, and once it has ended or its cancel is recorded. */
    WaitingFor:
      | {
          /** @enum {string} */
          kind: 'plan_approval';
          /** Format: uuid */
          waitpointId: string;
          /** Format: date-time */
          expiresAt: string;
        }
      | {
          /** @enum {string} */
          kind: 'queue';
          /** @description Its place in the chat's queue; 1 is next. */
          position: number;
        }
      | {
          /** @enum {string} */
          kind: 'provider_retry';
          /**
           * @description rate_limited: the provider answered 429 (its retry-after is waited out); provider_error: a 5xx, a timeout or a cut stream.
           * @enum {string}
           */
          reason: 'rate_limited' | 'provider_error';
          /** @description The model step's next attempt. */
          attempt: number;
          maxAttempts: number;
          /**
           * Format: date-time
           * @description When the next attempt starts.
           */
          retryAt: string;
        }
      | {
          /** @enum {string} */
          kind: 'tool_slot';
          toolName: string;
          /** @description The tool call's next try for one of the user's MAX_ACTIVE_TOOL_CALLS_PER_USER slots. */
          attempt: number;
          maxAttempts: number;
          /** Format: date-time */
          retryAt: string;
        }
      | null;
    Error: {
      error: string;
      /** @enum {string} */
      code:
        | 'INVALID_REQUEST'
        | 'INVALID_JSON'
        | 'INVALID_RECTANGLE'
        | 'TOO_MANY_FILES'
        | 'UNAUTHORIZED'
        | 'FORBIDDEN'
        | 'CHAT_NOT_FOUND'
        | 'RUN_NOT_FOUND'
        | 'ATTACHMENT_NOT_FOUND'
        | 'WAITPOINT_NOT_FOUND'
        | 'KEY_NOT_FOUND'
        | 'WEBHOOK_ENDPOINT_NOT_FOUND'
        | 'DELIVERY_NOT_FOUND'
        | 'MESSAGE_NOT_FOUND'
        | 'UNKNOWN_TOOL'
        | 'NOT_FOUND'
        | 'METHOD_NOT_ALLOWED'
        | 'RUN_ACTIVE'
        | 'RUN_NOT_ACTIVE'
        | 'WAITPOINT_RESOLVED'
        | 'EMAIL_TAKEN'
        | 'DELIVERY_IN_PROGRESS'
        | 'IDEMPOTENCY_IN_PROGRESS'
        | 'PLAN_CHANGED'
        | 'NOT_LATEST_TURN'
        | 'QUEUE_FULL'
        | 'INSUFFICIENT_CREDITS'
        | 'BUDGET_EXCEEDED'
        | 'PAYLOAD_TOO_LARGE'
        | 'RANGE_NOT_SATISFIABLE'
        | 'UNSUPPORTED_MEDIA_TYPE'
        | 'MEDIA_UNAVAILABLE'
        | 'LIMIT_REACHED'
        | 'IDEMPOTENCY_KEY_REUSED'
        | 'RATE_LIMITED'
        | 'ACTIVE_LIMIT'
        | 'INTERNAL'
        | 'PROVIDER_ERROR'
        | 'PROVIDER_NOT_CONFIGURED'
        | 'SERVICE_UNAVAILABLE'
        | 'TIMEOUT';
      details?: {
        path: string;
        message: string;
      }[];
      activeRun?: components['schemas']['ActiveRun'];
    };
    /**
     * @description With 409 RUN_ACTIVE: the run to follow.
     * @example {
     *       "id": "5e7b1c9d-3a2f-4d86-b0e4-9c1a6f3e8d27",
     *       "chatId": "3f6a2b8c-1d4e-4f70-8a93-5c2e7b1d9f04",
     *       "status": "WAITING",
     *       "waitpoint": {
     *         "id": "a2d8f5c1-7e4b-4c09-8b36-0f9e2a5d7c41",
     *         "type": "PLAN_APPROVAL",
     *         "status": "PENDING",
     *         "plan": {
     *           "summary": "Crop the lighthouse from the uploaded photo.",
     *           "steps": [
     *             {
     *               "toolName": "crop_image",
     *               "input": {
     *                 "attachmentId": "6b4f9d2e-8c3a-4e17-9d52-4b8e1f6a3c05",
     *                 "x_percent": 25,
     *                 "y_percent": 10,
     *                 "width_percent": 50,
     *                 "height_percent": 80
     *               },
     *               "reason": "The lighthouse fills the middle half of the frame.",
     *               "credits": "1"
     *             }
     *           ],
     *           "totalCredits": "1"
     *         },
     *         "planHash": "9f2c4b1e0d7a6c5b4a3928170f6e5d4c3b2a19087f6e5d4c3b2a190807f6e5d4",
     *         "feedback": null,
     *         "createdAt": "2026-11-23T09:30:03.200Z",
     *         "resolvedAt": null,
     *         "decidedBy": null,
     *         "decidedAt": null
     *       },
     *       "links": {
     *         "poll": "/api/v1/chats/3f6a2b8c-1d4e-4f70-8a93-5c2e7b1d9f04/runs/5e7b1c9d-3a2f-4d86-b0e4-9c1a6f3e8d27",
     *         "stream": "/api/v1/chats/3f6a2b8c-1d4e-4f70-8a93-5c2e7b1d9f04/runs/5e7b1c9d-3a2f-4d86-b0e4-9c1a6f3e8d27/events",
     *         "cancel": "/api/v1/chats/3f6a2b8c-1d4e-4f70-8a93-5c2e7b1d9f04/runs/5e7b1c9d-3a2f-4d86-b0e4-9c1a6f3e8d27/cancel",
     *         "decide": "/api/v1/chats/3f6a2b8c-1d4e-4f70-8a93-5c2e7b1d9f04/runs/5e7b1c9d-3a2f-4d86-b0e4-9c1a6f3e8d27/waitpoints/a2d8f5c1-7e4b-4c09-8b36-0f9e2a5d7c41/complete"
     *       }
     *     }
     */
    ActiveRun: {
      /** Format: uuid */
      id: string;
      /** Format: uuid */
      chatId: string;
      /** @enum {string} */
      status: 'QUEUED' | 'RUNNING' | 'WAITING';
      /** @description The plan waiting for approval, if any. */
      waitpoint: components['schemas']['Waitpoint'] | null;
      links: {
        /** @description GET: the run snapshot. */
        poll: string;
        /** @description GET: the run as Server-Sent Events. */
        stream: string;
        /** @description POST: cancel the run. */
        cancel: string;
        /** @description POST: approve or reject the open waitpoint; null when none is open. */
        decide: string | null;
      };
    };
    /**
     * @example {
     *       "status": "ready",
     *       "database": "up",
     *       "temporal": "up"
     *     }
     */
    Readiness: {
      /** @enum {string} */
      status: 'ready' | 'unavailable';
      /** @enum {string} */
      database: 'up' | 'down';
      /** @enum {string} */
      temporal: 'up' | 'down';
    };
    /**
     * @example {
     *       "user": {
     *         "id": "0b3c7a1e-5f2d-4c8a-9e61-2d7f4b9a0c13",
     *         "email": "ada@example.com",
     *         "createdAt": "2026-11-01T08:00:00.000Z",
     *         "creditBalance": "99"
     *       }
     *     }
     */
    UserEnvelope: {
      user: components['schemas']['User'];
    };
    /**
     * @example {
     *       "id": "0b3c7a1e-5f2d-4c8a-9e61-2d7f4b9a0c13",
     *       "email": "ada@example.com",
     *       "createdAt": "2026-11-01T08:00:00.000Z",
     *       "creditBalance": "99"
     *     }
     */
    User: {
      /** Format: uuid */
      id: string;
      email: string;
      /** Format: date-time */
      createdAt: string;
      /**
       * @description Credits left, a decimal string like `creditCost` (extension). A tool call reserves its price from it when it starts; a failed call gives it back.
       * @example 100
       */
      creditBalance: string;
    };
    /**
     * @example {
     *       "email": "ada@example.com",
     *       "password": "correct horse battery"
     *     }
     */
    Credentials: {
      /** Format: email */
      email: string;
      password: string;
    };
    /**
     * @example {
     *       "id": "f1a7c3e9-2b6d-4f48-a0c5-8e3b7d1f9a26",
     *       "name": "deploy script",
     *       "prefix": "svck_live_Xq7f",
     *       "lastUsedAt": null,
     *       "createdAt": "2026-11-01T08:05:00.000Z",
     *       "key": "svck_live_Xq7fT2mB9cLw4rN8pK1sV6yH3dJ0gZ5eA7uQ2iO9tRb"
     *     }
     */
    CreatedApiKey: components['schemas']['ApiKey'] & {
      /** @description The full secret, `svck_live_…`; shown only in this answer. */
      key: string;
    };
    /**
     * @example {
     *       "id": "f1a7c3e9-2b6d-4f48-a0c5-8e3b7d1f9a26",
     *       "name": "deploy script",
     *       "prefix": "svck_live_Xq7f",
     *       "lastUsedAt": "2026-11-23T09:30:00.412Z",
     *       "createdAt": "2026-11-01T08:05:00.000Z"
     *     }
     */
    ApiKey: {
      /** Format: uuid */
      id: string;
      name: string;
      /** @description The first 14 characters of the key. */
      prefix: string;
      /** Format: date-time */
      lastUsedAt: string | null;
      /** Format: date-time */
      createdAt: string;
    };
    /**
     * @example {
     *       "name": "deploy script"
     *     }
     */
    NewApiKey: {
      name: string;
    };
    /**
     * @example {
     *       "data": [
     *         {
     *           "id": "f1a7c3e9-2b6d-4f48-a0c5-8e3b7d1f9a26",
     *           "name": "deploy script",
     *           "prefix": "svck_live_Xq7f",
     *           "lastUsedAt": "2026-11-23T09:30:00.412Z",
     *           "createdAt": "2026-11-01T08:05:00.000Z"
     *         }
     *       ],
     *       "nextCursor": null
     *     }
     */
    ApiKeyList: {
      data: components['schemas']['ApiKey'][];
      /** @description Pass as `cursor` for the next page; null on the last page. */
      nextCursor: string | null;
    };
    /**
     * @example {
     *       "data": [
     *         {
     *           "id": "2e8a4c6f-1b9d-4e37-a5f2-7c3e9b1d6a54",
     *           "clientId": "mcp-client-7Yb3kQ",
     *           "clientName": "Desktop assistant",
     *           "lastUsedAt": "2026-11-23T09:30:00.412Z",
     *           "createdAt": "2026-11-02T10:00:00.000Z"
     *         }
     *       ],
     *       "nextCursor": null
     *     }
     */
    OAuthGrantList: {
      data: components['schemas']['OAuthGrant'][];
      /** @description Pass as `cursor` for the next page; null on the last page. */
      nextCursor: string | null;
    };
    /**
     * @example {
     *       "id": "2e8a4c6f-1b9d-4e37-a5f2-7c3e9b1d6a54",
     *       "clientId": "mcp-client-7Yb3kQ",
     *       "clientName": "Desktop assistant",
     *       "lastUsedAt": "2026-11-23T09:30:00.412Z",
     *       "createdAt": "2026-11-02T10:00:00.000Z"
     *     }
     */
    OAuthGrant: {
      /** Format: uuid */
      id: string;
      clientId: string;
      /** @description The name the client registered with. */
      clientName: string;
      /** Format: date-time */
      lastUsedAt: string | null;
      /** Format: date-time */
      createdAt: string;
    };
    /**
     * @example {
     *       "id": "3f6a2b8c-1d4e-4f70-8a93-5c2e7b1d9f04",
     *       "title": "Crop the lighthouse photo",
     *       "isFavorite": false,
     *       "lastMessageAt": "2026-11-23T09:30:00.000Z",
     *       "lastMessageId": "8d1e4c7a-2b5f-4e90-a3c6-7f0b2d5e8a19",
     *       "settings": {
     *         "model": "claude",
     *         "maxSteps": 4
     *       },
     *       "createdAt": "2026-11-23T09:30:00.000Z",
     *       "updatedAt": "2026-11-23T09:30:00.000Z"
     *     }
     */
    Chat: {
      /** Format: uuid */
      id: string;
      title: string;
      isFavorite: boolean;
      /** Format: date-time */
      lastMessageAt: string | null;
      /** Format: uuid */
      lastMessageId: string | null;
      settings: components['schemas']['ChatSettings'];
      /** Format: date-time */
      createdAt: string;
      /** Format: date-time */
      updatedAt: string;
    };
    /**
     * @description The chat's defaults for its runs' settings; a send's own win. Only those set are shown.
     * @example {
     *       "model": "claude",
     *       "maxSteps": 4
     *     }
     */
    ChatSettings: {
      model?: string;
      instructions?: string;
      maxSteps?: number;
      tools?: ('crop_image' | 'ai_image_2' | 'merge_videos')[];
    };
    /**
     * @example {
     *       "title": "Crop the lighthouse photo"
     *     }
     */
    NewChat: {
      title?: string;
    };
    /**
     * @example {
     *       "data": [
     *         {
     *           "id": "3f6a2b8c-1d4e-4f70-8a93-5c2e7b1d9f04",
     *           "title": "Crop the lighthouse photo",
     *           "isFavorite": false,
     *           "lastMessageAt": "2026-11-23T09:30:00.000Z",
     *           "lastMessageId": "8d1e4c7a-2b5f-4e90-a3c6-7f0b2d5e8a19",
     *           "settings": {
     *             "model": "claude",
     *             "maxSteps": 4
     *           },
     *           "createdAt": "2026-11-23T09:30:00.000Z",
     *           "updatedAt": "2026-11-23T09:30:00.000Z"
     *         }
     *       ],
     *       "nextCursor": null
     *     }
     */
    ChatList: {
      data: components['schemas']['Chat'][];
      /** @description Pass as `cursor` for the next page; null on the last page. */
      nextCursor: string | null;
    };
    /**
     * @example {
     *       "title": "Lighthouse crops",
     *       "isFavorite": true,
     *       "model": "claude",
     *       "maxSteps": 4
     *     }
     */
    ChatUpdate: {
      title?: string;
      isFavorite?: boolean;
      /** @description A model of the operator's list (docs/models.md); the operator's default when left out. */
      model?: string | null;
      /** @description The run's instructions (its system prompt); the operator's when left out. */
      instructions?: string | null;
      /** @description The most model steps the run takes: 1 up to the operator’s cap (AGENT_MAX_STEPS). */
      maxSteps?: number | null;
      /** @description The tools the model may call; `[]` for none; all three when left out. */
      tools?: ('crop_image' | 'ai_image_2' | 'merge_videos')[] | null;
    };
    /**
     * @example {
     *       "data": [
     *         {
     *           "id": "8d1e4c7a-2b5f-4e90-a3c6-7f0b2d5e8a19",
     *           "chatId": "3f6a2b8c-1d4e-4f70-8a93-5c2e7b1d9f04",
     *           "role": "user",
     *           "runId": "5e7b1c9d-3a2f-4d86-b0e4-9c1a6f3e8d27",
     *           "contentBlocks": [
     *             {
     *               "type": "text",
     *               "text": "Crop the lighthouse out of this photo."
     *             },
     *             {
     *               "type": "image",
     *               "attachmentId": "6b4f9d2e-8c3a-4e17-9d52-4b8e1f6a3c05",
     *               "url": "https://files.example.com/files/uploads/6b4f9d2e-8c3a-4e17-9d52-4b8e1f6a3c05/lighthouse.jpg?exp=1795600000&sig=c2lnbmF0dXJl"
     *             }
     *           ],
     *           "attachments": [
     *             {
     *               "id": "6b4f9d2e-8c3a-4e17-9d52-4b8e1f6a3c05",
     *               "filename": "lighthouse.jpg",
     *               "mimeType": "image/jpeg",
     *               "status": "ready",
     *               "url": "https://files.example.com/files/uploads/6b4f9d2e-8c3a-4e17-9d52-4b8e1f6a3c05/lighthouse.jpg?exp=1795600000&sig=c2lnbmF0dXJl"
     *             }
     *           ],
     *           "replyTo": null,
     *           "regeneratedFrom": null,
     *           "createdAt": "2026-11-23T09:30:00.000Z"
     *         }
     *       ],
     *       "nextCursor": null
     *     }
     */
    MessageList: {
      data: components['schemas']['Message'][];
      /** @description Pass as `cursor` for the next page; null on the last page. */
      nextCursor: string | null;
    };
    /**
     * @example {
     *       "id": "8d1e4c7a-2b5f-4e90-a3c6-7f0b2d5e8a19",
     *       "chatId": "3f6a2b8c-1d4e-4f70-8a93-5c2e7b1d9f04",
     *       "role": "user",
     *       "runId": "5e7b1c9d-3a2f-4d86-b0e4-9c1a6f3e8d27",
     *       "contentBlocks": [
     *         {
     *           "type": "text",
     *           "text": "Crop the lighthouse out of this photo."
     *         },
     *         {
     *           "type": "image",
     *           "attachmentId": "6b4f9d2e-8c3a-4e17-9d52-4b8e1f6a3c05",
     *           "url": "https://files.example.com/files/uploads/6b4f9d2e-8c3a-4e17-9d52-4b8e1f6a3c05/lighthouse.jpg?exp=1795600000&sig=c2lnbmF0dXJl"
     *         }
     *       ],
     *       "attachments": [
     *         {
     *           "id": "6b4f9d2e-8c3a-4e17-9d52-4b8e1f6a3c05",
     *           "filename": "lighthouse.jpg",
     *           "mimeType": "image/jpeg",
     *           "status": "ready",
     *           "url": "https://files.example.com/files/uploads/6b4f9d2e-8c3a-4e17-9d52-4b8e1f6a3c05/lighthouse.jpg?exp=1795600000&sig=c2lnbmF0dXJl"
     *         }
     *       ],
     *       "replyTo": null,
     *       "regeneratedFrom": null,
     *       "createdAt": "2026-11-23T09:30:00.000Z"
     *     }
     */
    Message: {
      /** Format: uuid */
      id: string;
      /** Format: uuid */
      chatId: string;
      /** @enum {string} */
      role: 'user' | 'assistant';
      /** Format: uuid */
      runId: string | null;
      contentBlocks: components['schemas']['ContentBlock'][];
      attachments: components['schemas']['Attachment'][];
      /**
       * Format: uuid
       * @description An assistant message: the user message it answers (extension). Several answers to one message are its alternatives (regenerated); the newest is the one the agent reads on. Null for a user message.
       */
      replyTo: string | null;
      /**
       * Format: uuid
       * @description A regenerated answer: the earlier answer to the same message it replaced, which stays listed (extension). Null otherwise.
       */
      regeneratedFrom: string | null;
      /** Format: date-time */
      createdAt: string;
    };
    ContentBlock:
      | {
          /** @enum {string} */
          type: 'text';
          text: string;
        }
      | {
          /** @enum {string} */
          type: 'image';
          attachmentId: string | null;
          url: string;
        }
      | {
          /** @enum {string} */
          type: 'video';
          attachmentId: string | null;
          url: string;
        }
      | {
          /** @enum {string} */
          type: 'audio';
          attachmentId: string | null;
          url: string;
        }
      | {
          /** @enum {string} */
          type: 'tool_use';
          toolCallId: string;
          toolName: string;
          input?: unknown;
        }
      | {
          /** @enum {string} */
          type: 'tool_result';
          toolCallId: string;
          toolName: string;
          result?: components['schemas']['ToolResult'];
          error?: string;
        };
    /**
     * @example {
     *       "id": "6b4f9d2e-8c3a-4e17-9d52-4b8e1f6a3c05",
     *       "filename": "lighthouse.jpg",
     *       "mimeType": "image/jpeg",
     *       "status": "ready",
     *       "url": "https://files.example.com/files/uploads/6b4f9d2e-8c3a-4e17-9d52-4b8e1f6a3c05/lighthouse.jpg?exp=1795600000&sig=c2lnbmF0dXJl"
     *     }
     */
    Attachment: {
      /** Format: uuid */
      id: string;
      filename: string;
      mimeType: string;
      /** @description `ready` when stored; `processing` and `failed` are reserved. */
      status: string;
      /** @description Durable URL of the file; it does not expire. */
      url: string;
    };
    /**
     * @example {
     *       "messageId": "c4a9e2f7-6b1d-4a38-9f05-1e8c3b7d2a60",
     *       "title": "Lighthouse crops, take two"
     *     }
     */
    ForkRequest: {
      /**
       * Format: uuid
       * @description A message of the chat (user or assistant): the fork holds the history up to and including it.
       */
      messageId: string;
      title?: string;
    };
    /**
     * @example {
     *       "attachments": [
     *         {
     *           "id": "6b4f9d2e-8c3a-4e17-9d52-4b8e1f6a3c05",
     *           "filename": "lighthouse.jpg",
     *           "mimeType": "image/jpeg",
     *           "status": "ready",
     *           "url": "https://files.example.com/files/uploads/6b4f9d2e-8c3a-4e17-9d52-4b8e1f6a3c05/lighthouse.jpg?exp=1795600000&sig=c2lnbmF0dXJl"
     *         }
     *       ],
     *       "chatId": "3f6a2b8c-1d4e-4f70-8a93-5c2e7b1d9f04"
     *     }
     */
    UploadResult: {
      attachments: components['schemas']['Attachment'][];
      /** Format: uuid */
      chatId: string | null;
    };
    /**
     * @example {
     *       "chatId": "3f6a2b8c-1d4e-4f70-8a93-5c2e7b1d9f04",
     *       "messageId": "8d1e4c7a-2b5f-4e90-a3c6-7f0b2d5e8a19",
     *       "runId": "5e7b1c9d-3a2f-4d86-b0e4-9c1a6f3e8d27",
     *       "triggerRunId": null,
     *       "status": "queued",
     *       "queuePosition": null
     *     }
     */
    QueuedTurn: {
      /** Format: uuid */
      chatId: string;
      /** Format: uuid */
      messageId: string;
      /** Format: uuid */
      runId: string;
      triggerRunId: string | null;
      /** @enum {string} */
      status: 'queued';
      /** @description The turn's place in the chat's queue (extension; 1 is next): it starts when the runs before it have ended. Null when it is the chat's run now. */
      queuePosition: number | null;
      /** @description With `onActiveRun: "interrupt"`: the run this turn cancelled, the chat's active run; empty when the chat had none (extension). It ends CANCELLED with its agent.failed, as any cancelled run. */
      interruptedRunIds?: string[];
    };
    /**
     * @example {
     *       "text": "Crop the lighthouse out of this photo.",
     *       "chatId": "3f6a2b8c-1d4e-4f70-8a93-5c2e7b1d9f04",
     *       "attachmentIds": [
     *         "6b4f9d2e-8c3a-4e17-9d52-4b8e1f6a3c05"
     *       ],
     *       "planMode": true,
     *       "model": "claude",
     *       "tools": [
     *         "crop_image"
     *       ],
     *       "budget": {
     *         "maxCredits": "5",
     *         "maxToolCalls": 2
     *       },
     *       "metadata": {
     *         "customer": "acme",
     *         "ticket": "T-1042"
     *       }
     *     }
     */
    CompletionRequest: {
      text: string;
      /** Format: uuid */
      chatId?: string;
      /** @default [] */
      image_urls?: string[];
      /** @default [] */
      attachmentIds?: string[];
      /** @default false */
      planMode?: boolean;
      /** @description A model of the operator's list (docs/models.md); the operator's default when left out. */
      model?: string;
      /** @description The run's instructions (its system prompt); the operator's when left out. */
      instructions?: string;
      /** @description The most model steps the run takes: 1 up to the operator’s cap (AGENT_MAX_STEPS). */
      maxSteps?: number;
      /** @description The tools the model may call; `[]` for none; all three when left out. */
      tools?: ('crop_image' | 'ai_image_2' | 'merge_videos')[];
      budget?: components['schemas']['RunBudget'];
      /**
       * @description Your own string pairs for the run (extension): at most 16 keys of 1–40 characters (no "="), values of at most 512 characters. Shown in the snapshot, the runs lists and the agent events, and filtered on with metadata[<key>]=<value>.
       * @default {}
       * @example {
       *       "customer": "acme",
       *       "ticket": "T-1042"
       *     }
       */
      metadata?: {
        [key: string]: string;
      };
      /**
       * @description What the send does when the chat already has a run not yet finished (extension): `reject` answers 409 RUN_ACTIVE; `enqueue` queues the turn behind it (202 with its `queuePosition`; 409 QUEUE_FULL past the chat's cap); `interrupt` cancels the chat's run (as a cancel would) and this turn runs next, ahead of any turn already queued (202 with `queuePosition` 1 and `interruptedRunIds`; on a chat with no run, a plain send).
       * @default reject
       * @enum {string}
       */
      onActiveRun?: 'reject' | 'enqueue' | 'interrupt';
    };
    /**
     * @example {
     *       "maxCredits": "5",
     *       "maxToolCalls": 2
     *     }
     */
    RunBudget: {
      /** @description The most credits the run may spend, model steps and tools together; the run ends FAILED with BUDGET_EXCEEDED before a step or a tool call that could pass it. */
      maxCredits?: number | string;
      /** @description The most tool calls the run may make; past it the run ends FAILED with BUDGET_EXCEEDED. */
      maxToolCalls?: number;
    };
    /**
     * @example {
     *       "text": "Crop the lighthouse out of this photo.",
     *       "planMode": "true",
     *       "file": [
     *         "<binary: lighthouse.jpg>"
     *       ]
     *     }
     */
    CompletionForm: {
      text: string;
      /** Format: uuid */
      chatId?: string;
      /**
       * @default false
       * @enum {string}
       */
      planMode?: 'true' | 'false';
      /**
       * @description What the send does when the chat already has a run not yet finished (extension): `reject` answers 409 RUN_ACTIVE; `enqueue` queues the turn behind it (202 with its `queuePosition`; 409 QUEUE_FULL past the chat's cap); `interrupt` cancels the chat's run (as a cancel would) and this turn runs next, ahead of any turn already queued (202 with `queuePosition` 1 and `interruptedRunIds`; on a chat with no run, a plain send).
       * @default reject
       * @enum {string}
       */
      onActiveRun?: 'reject' | 'enqueue' | 'interrupt';
      /** @description repeat for several files; 8 files in all */
      file?: string[];
      files?: string[];
      /** @description The run's metadata as JSON text, e.g. {"customer":"acme"} (extension): as metadata in the JSON body. */
      metadata?: string;
    };
    /**
     * @example {
     *       "data": [
     *         {
     *           "id": "5e7b1c9d-3a2f-4d86-b0e4-9c1a6f3e8d27",
     *           "chatId": "3f6a2b8c-1d4e-4f70-8a93-5c2e7b1d9f04",
     *           "messageId": "8d1e4c7a-2b5f-4e90-a3c6-7f0b2d5e8a19",
     *           "assistantMessageId": "c4a9e2f7-6b1d-4a38-9f05-1e8c3b7d2a60",
     *           "status": "COMPLETE",
     *           "planMode": true,
     *           "triggerRunId": "0195a3c2-7d4e-7b81-9f3a-6c2e8d1b5a47",
     *           "metadata": {
     *             "customer": "acme",
     *             "ticket": "T-1042"
     *           },
     *           "error": null,
     *           "cancelRequestedAt": null,
     *           "createdAt": "2026-11-23T09:30:00.000Z",
     *           "startedAt": "2026-11-23T09:30:00.412Z",
     *           "finishedAt": "2026-11-23T09:30:21.050Z",
     *           "updatedAt": "2026-11-23T09:30:21.050Z"
     *         }
     *       ],
     *       "nextCursor": null
     *     }
     */
    RunList: {
      data: components['schemas']['RunSummary'][];
      /** @description Pass as `cursor` for the next page; null on the last page. */
      nextCursor: string | null;
    };
    /**
     * @example {
     *       "id": "5e7b1c9d-3a2f-4d86-b0e4-9c1a6f3e8d27",
     *       "chatId": "3f6a2b8c-1d4e-4f70-8a93-5c2e7b1d9f04",
     *       "messageId": "8d1e4c7a-2b5f-4e90-a3c6-7f0b2d5e8a19",
     *       "assistantMessageId": "c4a9e2f7-6b1d-4a38-9f05-1e8c3b7d2a60",
     *       "status": "COMPLETE",
     *       "planMode": true,
     *       "triggerRunId": "0195a3c2-7d4e-7b81-9f3a-6c2e8d1b5a47",
     *       "metadata": {
     *         "customer": "acme",
     *         "ticket": "T-1042"
     *       },
     *       "error": null,
     *       "cancelRequestedAt": null,
     *       "createdAt": "2026-11-23T09:30:00.000Z",
     *       "startedAt": "2026-11-23T09:30:00.412Z",
     *       "finishedAt": "2026-11-23T09:30:21.050Z",
     *       "updatedAt": "2026-11-23T09:30:21.050Z"
     *     }
     */
    RunSummary: {
      /** Format: uuid */
      id: string;
      /** Format: uuid */
      chatId: string;
      /**
       * Format: uuid
       * @description The user message it answers (the same for a regenerated answer).
       */
      messageId: string;
      /** Format: uuid */
      assistantMessageId: string;
      /** @enum {string} */
      status: 'QUEUED' | 'RUNNING' | 'WAITING' | 'COMPLETE' | 'FAILED' | 'CANCELLED';
      planMode: boolean;
      triggerRunId: string | null;
      /**
       * @description Your own string pairs for the run (extension): at most 16 keys of 1–40 characters (no "="), values of at most 512 characters. Shown in the snapshot, the runs lists and the agent events, and filtered on with metadata[<key>]=<value>.
       * @example {
       *       "customer": "acme",
       *       "ticket": "T-1042"
       *     }
       */
      metadata: {
        [key: string]: string;
      };
      error: string | null;
      /** Format: date-time */
      cancelRequestedAt: string | null;
      /** Format: date-time */
      createdAt: string;
      /** Format: date-time */
      startedAt: string | null;
      /** Format: date-time */
      finishedAt: string | null;
      /** Format: date-time */
      updatedAt: string;
    };
    /**
     * @example {
     *       "metadata": {
     *         "customer": "acme",
     *         "ticket": "T-1042",
     *         "attempt": "2"
     *       }
     *     }
     */
    RegenerateRequest: {
      /** @default false */
      planMode?: boolean;
      /** @description A model of the operator's list (docs/models.md); the operator's default when left out. */
      model?: string;
      /** @description The run's instructions (its system prompt); the operator's when left out. */
      instructions?: string;
      /** @description The most model steps the run takes: 1 up to the operator’s cap (AGENT_MAX_STEPS). */
      maxSteps?: number;
      /** @description The tools the model may call; `[]` for none; all three when left out. */
      tools?: ('crop_image' | 'ai_image_2' | 'merge_videos')[];
      budget?: components['schemas']['RunBudget'];
      /**
       * @description Your own string pairs for the run (extension): at most 16 keys of 1–40 characters (no "="), values of at most 512 characters. Shown in the snapshot, the runs lists and the agent events, and filtered on with metadata[<key>]=<value>.
       * @default {}
       * @example {
       *       "customer": "acme",
       *       "ticket": "T-1042"
       *     }
       */
      metadata?: {
        [key: string]: string;
      };
    };
    /**
     * @description An event of the stream. A `: ping` comment comes every 15 s; the stream ends after the terminal status.
     * @example {
     *       "id": "4",
     *       "event": "text.delta",
     *       "data": "{\"text\":\"Hel\"}"
     *     }
     */
    RunStreamEvent:
      | {
          /** @description Increasing; give the last one seen as `Last-Event-ID` to resume. */
          id: string;
          /** @enum {string} */
          event: 'snapshot';
          /** @description The run as a poll shows it; first, unless resuming. */
          data: string;
        }
      | {
          /** @description Increasing; give the last one seen as `Last-Event-ID` to resume. */
          id: string;
          /** @enum {string} */
          event: 'text.delta';
          /** @description Text appended to the answer; with `replace: true`, the whole text, replacing it. */
          data: string;
        }
      | {
          /** @description Increasing; give the last one seen as `Last-Event-ID` to resume. */
          id: string;
          /** @enum {string} */
          event: 'tool.started' | 'tool.finished';
          /** @description The tool call. */
          data: string;
        }
      | {
          /** @description Increasing; give the last one seen as `Last-Event-ID` to resume. */
          id: string;
          /** @enum {string} */
          event: 'waitpoint.opened' | 'waitpoint.resolved';
          /** @description The plan waitpoint. */
          data: string;
        }
      | {
          /** @description Increasing; give the last one seen as `Last-Event-ID` to resume. */
          id: string;
          /** @enum {string} */
          event: 'status';
          /** @description The run's new status (RUNNING: it started), with its error when it failed. */
          data: string;
        }
      | {
          /** @description Increasing; give the last one seen as `Last-Event-ID` to resume. */
          id: string;
          /** @enum {string} */
          event: 'queued';
          /** @description The turn was queued behind its chat's active run (onActiveRun enqueue or interrupt), at this place. */
          data: string;
        }
      | {
          /** @description Increasing; give the last one seen as `Last-Event-ID` to resume. */
          id: string;
          /** @enum {string} */
          event: 'waiting';
          /** @description The running run began waiting (a provider's retry, a tool-call slot), or moves again (null). */
          data: string;
        };
    /**
     * @description An event of the chat's stream: each names its run (`runId`) and carries what the run's own stream sends. A `: ping` comment comes every 15 s; the stream goes on until the client leaves or the chat is deleted.
     * @example {
     *       "id": "41",
     *       "event": "text.delta",
     *       "data": "{\"runId\":\"6f1c2b9e-3a0d-4e59-9a55-0f4f2a8b7c10\",\"data\":{\"text\":\"Hel\"}}"
     *     }
     */
    ChatStreamEvent:
      | {
          /** @description Increasing; give the last one seen as `Last-Event-ID` to resume. */
          id: string;
          /** @enum {string} */
          event: 'snapshot';
          /** @description The chat's unfinished runs; first, unless resuming, and again when a resume cannot go on without a gap. */
          data: string;
        }
      | {
          /** @description Increasing; give the last one seen as `Last-Event-ID` to resume. */
          id: string;
          /** @enum {string} */
          event: 'text.delta';
          /** @description Of the run `runId`: Text appended to the answer; with `replace: true`, the whole text, replacing it. */
          data: string;
        }
      | {
          /** @description Increasing; give the last one seen as `Last-Event-ID` to resume. */
          id: string;
          /** @enum {string} */
          event: 'tool.started' | 'tool.finished';
          /** @description Of the run `runId`: The tool call. */
          data: string;
        }
      | {
          /** @description Increasing; give the last one seen as `Last-Event-ID` to resume. */
          id: string;
          /** @enum {string} */
          event: 'waitpoint.opened' | 'waitpoint.resolved';
          /** @description Of the run `runId`: The plan waitpoint. */
          data: string;
        }
      | {
          /** @description Increasing; give the last one seen as `Last-Event-ID` to resume. */
          id: string;
          /** @enum {string} */
          event: 'status';
          /** @description Of the run `runId`: The run's new status (RUNNING: it started), with its error when it failed. */
          data: string;
        }
      | {
          /** @description Increasing; give the last one seen as `Last-Event-ID` to resume. */
          id: string;
          /** @enum {string} */
          event: 'queued';
          /** @description Of the run `runId`: The turn was queued behind its chat's active run (onActiveRun enqueue or interrupt), at this place. */
          data: string;
        }
      | {
          /** @description Increasing; give the last one seen as `Last-Event-ID` to resume. */
          id: string;
          /** @enum {string} */
          event: 'waiting';
          /** @description Of the run `runId`: The running run began waiting (a provider's retry, a tool-call slot), or moves again (null). */
          data: string;
        };
    /**
     * @example {
     *       "approved": true,
     *       "planHash": "9f2c4b1e0d7a6c5b4a3928170f6e5d4c3b2a19087f6e5d4c3b2a190807f6e5d4"
     *     }
     */
    WaitpointDecision: {
      approved: boolean;
      feedback?: string;
      /**
       * @description The waitpoint's planHash as the decider saw it: when the plan pending is another, the decision is refused with 409 PLAN_CHANGED.
       * @example 9f2c4b1e0d7a6c5b4a3928170f6e5d4c3b2a19087f6e5d4c3b2a190807f6e5d4
       */
      planHash?: string;
    };
    /**
     * @example {
     *       "attachmentId": "6b4f9d2e-8c3a-4e17-9d52-4b8e1f6a3c05",
     *       "x_percent": 25,
     *       "y_percent": 10,
     *       "width_percent": 50,
     *       "height_percent": 80
     *     }
     */
    CropImageInput: {
      /**
       * Format: uri
       * @description The image to crop (http or https). Give this or attachmentId.
       */
      image_url?: string;
      /**
       * Format: uuid
       * @description An uploaded image of yours. Give this or image_url.
       */
      attachmentId?: string;
      /** @description Pixel form: left edge. */
      x?: number;
      /** @description Pixel form: top edge. */
      y?: number;
      /** @description Pixel form: width. */
      width?: number;
      /** @description Pixel form: height. */
      height?: number;
      /** @description Percent form: left edge, 0–100 of the image width. */
      x_percent?: number;
      /** @description Percent form: top edge, 0–100 of the image height. */
      y_percent?: number;
      /** @description Percent form: width, more than 0 and at most 100 - x_percent of the image width. */
      width_percent?: number;
      /** @description Percent form: height, more than 0 and at most 100 - y_percent of the image height. */
      height_percent?: number;
      /** @description Object form: the rectangle in pixels. */
      crop?: {
        x: number;
        y: number;
        width: number;
        height: number;
      };
    } & ((unknown | unknown) & (unknown | unknown | unknown));
    /**
     * @example {
     *       "prompt": "A lighthouse at dusk, watercolour",
     *       "aspect_ratio": "16:9",
     *       "seed": 42
     *     }
     */
    AiImage2Input: {
      /** @description What to draw, or how to change the image. */
      prompt: string;
      /**
       * Format: uri
       * @description An image to edit (http or https); without it a new image is made.
       */
      image_url?: string;
      /**
       * @description The output shape.
       * @default 1:1
       * @enum {string}
       */
      aspect_ratio?: '1:1' | '16:9' | '9:16' | '4:3' | '3:4';
      /** @description Makes the result repeatable where the provider supports it. */
      seed?: number;
    };
    /**
     * @example {
     *       "video_urls": [
     *         "https://media.example.com/clips/intro.mp4",
     *         "https://media.example.com/clips/main.mp4"
     *       ],
     *       "transition": "fade",
     *       "transition_duration": 0.5
     *     }
     */
    MergeVideosInput: {
      /** @description The videos to join, in order (http or https), 2–10. */
      video_urls: string[];
      /**
       * @description How one video passes into the next.
       * @default none
       * @enum {string}
       */
      transition?: 'none' | 'fade' | 'dissolve';
      /**
       * @description Seconds each transition lasts (fade and dissolve only).
       * @default 1
       */
      transition_duration?: number;
    };
    /**
     * @example {
     *       "id": "9c5e1a8f-4b7d-4a23-8f61-2c9e5b3a7d08",
     *       "url": "https://hooks.example.com/agent-chat",
     *       "events": [
     *         "agent.completed",
     *         "agent.failed"
     *       ],
     *       "isActive": true,
     *       "createdAt": "2026-11-01T08:10:00.000Z",
     *       "secret": "svcwhsec_4Tg8pLq2Zr7Wv1Nc5Hx9Kb3Jm6Yd0Fs"
     *     }
     */
    CreatedWebhookEndpoint: components['schemas']['WebhookEndpoint'] & {
      /** @description The signing secret, `svcwhsec_…`; shown only in this answer. */
      secret: string;
    };
    /**
     * @example {
     *       "id": "9c5e1a8f-4b7d-4a23-8f61-2c9e5b3a7d08",
     *       "url": "https://hooks.example.com/agent-chat",
     *       "events": [
     *         "agent.completed",
     *         "agent.failed"
     *       ],
     *       "isActive": true,
     *       "createdAt": "2026-11-01T08:10:00.000Z"
     *     }
     */
    WebhookEndpoint: {
      /** Format: uuid */
      id: string;
      url: string;
      events: ('agent.started' | 'agent.completed' | 'agent.failed' | 'tool.completed')[];
      isActive: boolean;
      /** Format: date-time */
      createdAt: string;
    };
    /**
     * @example {
     *       "url": "https://hooks.example.com/agent-chat",
     *       "events": [
     *         "agent.completed",
     *         "agent.failed"
     *       ]
     *     }
     */
    NewWebhookEndpoint: {
      /** Format: uri */
      url: string;
      events: ('agent.started' | 'agent.completed' | 'agent.failed' | 'tool.completed')[];
    };
    /**
     * @example {
     *       "overlapSeconds": 3600
     *     }
     */
    SecretRotation: {
      /**
       * @description How long the old secret keeps signing, in `x-svc-signature-previous`, beside the new one (0 to 86400; default 86400).
       * @default 86400
       */
      overlapSeconds?: number;
    };
    /**
     * @example {
     *       "data": [
     *         {
     *           "id": "9c5e1a8f-4b7d-4a23-8f61-2c9e5b3a7d08",
     *           "url": "https://hooks.example.com/agent-chat",
     *           "events": [
     *             "agent.completed",
     *             "agent.failed"
     *           ],
     *           "isActive": true,
     *           "createdAt": "2026-11-01T08:10:00.000Z"
     *         }
     *       ],
     *       "nextCursor": null
     *     }
     */
    WebhookEndpointList: {
      data: components['schemas']['WebhookEndpoint'][];
      /** @description Pass as `cursor` for the next page; null on the last page. */
      nextCursor: string | null;
    };
    /**
     * @example {
     *       "data": [
     *         {
     *           "id": "d7b2e6a4-9f1c-4d85-b3e0-5a8c2f4e1b97",
     *           "event": "agent.completed",
     *           "envelopeId": "wh:9c5e1a8f-4b7d-4a23-8f61-2c9e5b3a7d08:agent.completed:5e7b1c9d-3a2f-4d86-b0e4-9c1a6f3e8d27",
     *           "status": "DELIVERED",
     *           "createdAt": "2026-11-23T09:30:21.050Z",
     *           "deliveredAt": "2026-11-23T09:30:21.310Z",
     *           "attempts": [
     *             {
     *               "series": 1,
     *               "attempt": 1,
     *               "startedAt": "2026-11-23T09:30:21.100Z",
     *               "durationMs": 210,
     *               "statusCode": 200,
     *               "error": null,
     *               "responseBody": "ok",
     *               "signedContent": "1795000000.{\"id\":\"wh:9c5e1a8f-4b7d-4a23-8f61-2c9e5b3a7d08:agent.completed:5e7b1c9d-3a2f-4d86-b0e4-9c1a6f3e8d27\",\"event\":\"agent.completed\",…}",
     *               "requestHeaders": {
     *                 "content-type": "application/json",
     *                 "x-svc-event": "agent.completed",
     *                 "x-svc-timestamp": "1795000000",
     *                 "x-svc-signature": "sha256=5d41402abc4b2a76b9719d911017c592ae2c8d5c1a1f9b3c8c1e0b7b1a2c3d4e",
     *                 "x-svc-delivery-id": "d7b2e6a4-9f1c-4d85-b3e0-5a8c2f4e1b97"
     *               }
     *             }
     *           ],
     *           "attemptCount": 1
     *         }
     *       ],
     *       "nextCursor": null
     *     }
     */
    WebhookDeliveryList: {
      data: components['schemas']['WebhookDelivery'][];
      /** @description Pass as `cursor` for the next page; null on the last page. */
      nextCursor: string | null;
    };
    /**
     * @example {
     *       "id": "d7b2e6a4-9f1c-4d85-b3e0-5a8c2f4e1b97",
     *       "event": "agent.completed",
     *       "envelopeId": "wh:9c5e1a8f-4b7d-4a23-8f61-2c9e5b3a7d08:agent.completed:5e7b1c9d-3a2f-4d86-b0e4-9c1a6f3e8d27",
     *       "status": "DELIVERED",
     *       "createdAt": "2026-11-23T09:30:21.050Z",
     *       "deliveredAt": "2026-11-23T09:30:21.310Z",
     *       "attempts": [
     *         {
     *           "series": 1,
     *           "attempt": 1,
     *           "startedAt": "2026-11-23T09:30:21.100Z",
     *           "durationMs": 210,
     *           "statusCode": 200,
     *           "error": null,
     *           "responseBody": "ok",
     *           "signedContent": "1795000000.{\"id\":\"wh:9c5e1a8f-4b7d-4a23-8f61-2c9e5b3a7d08:agent.completed:5e7b1c9d-3a2f-4d86-b0e4-9c1a6f3e8d27\",\"event\":\"agent.completed\",…}",
     *           "requestHeaders": {
     *             "content-type": "application/json",
     *             "x-svc-event": "agent.completed",
     *             "x-svc-timestamp": "1795000000",
     *             "x-svc-signature": "sha256=5d41402abc4b2a76b9719d911017c592ae2c8d5c1a1f9b3c8c1e0b7b1a2c3d4e",
     *             "x-svc-delivery-id": "d7b2e6a4-9f1c-4d85-b3e0-5a8c2f4e1b97"
     *           }
     *         }
     *       ],
     *       "attemptCount": 1
     *     }
     */
    WebhookDelivery: {
      /** Format: uuid */
      id: string;
      /** @enum {string} */
      event: 'agent.started' | 'agent.completed' | 'agent.failed' | 'tool.completed';
      envelopeId: string;
      /** @enum {string} */
      status: 'PENDING' | 'DELIVERED' | 'FAILED';
      /** Format: date-time */
      createdAt: string;
      /** Format: date-time */
      deliveredAt: string | null;
      /** @description The latest attempts (at most 20), oldest first; `attemptCount` tells how many there were in all. */
      attempts: components['schemas']['WebhookAttempt'][];
      attemptCount: number;
    };
    /**
     * @example {
     *       "series": 1,
     *       "attempt": 1,
     *       "startedAt": "2026-11-23T09:30:21.100Z",
     *       "durationMs": 210,
     *       "statusCode": 200,
     *       "error": null,
     *       "responseBody": "ok",
     *       "signedContent": "1795000000.{\"id\":\"wh:9c5e1a8f-4b7d-4a23-8f61-2c9e5b3a7d08:agent.completed:5e7b1c9d-3a2f-4d86-b0e4-9c1a6f3e8d27\",\"event\":\"agent.completed\",…}",
     *       "requestHeaders": {
     *         "content-type": "application/json",
     *         "x-svc-event": "agent.completed",
     *         "x-svc-timestamp": "1795000000",
     *         "x-svc-signature": "sha256=5d41402abc4b2a76b9719d911017c592ae2c8d5c1a1f9b3c8c1e0b7b1a2c3d4e",
     *         "x-svc-delivery-id": "d7b2e6a4-9f1c-4d85-b3e0-5a8c2f4e1b97"
     *       }
     *     }
     */
    WebhookAttempt: {
      series: number;
      attempt: number;
      /** Format: date-time */
      startedAt: string;
      durationMs: number;
      statusCode: number | null;
      error: string | null;
      /** @description The first 4 KB of the answer. */
      responseBody: string | null;
      /** @description The exact string this attempt signed, `<x-svc-timestamp>.<raw body>`: HMAC-SHA256 of it with your secret must equal x-svc-signature. Null for attempts recorded before the log kept it. */
      signedContent: string | null;
      /** @description The request headers this attempt sent (its signature, never the secret). */
      requestHeaders: {
        [key: string]: string;
      } | null;
    };
    /**
     * @example {
     *       "delivery": {
     *         "id": "d7b2e6a4-9f1c-4d85-b3e0-5a8c2f4e1b97",
     *         "event": "agent.completed",
     *         "envelopeId": "wh:9c5e1a8f-4b7d-4a23-8f61-2c9e5b3a7d08:agent.completed:5e7b1c9d-3a2f-4d86-b0e4-9c1a6f3e8d27",
     *         "status": "PENDING",
     *         "createdAt": "2026-11-23T09:30:21.050Z",
     *         "deliveredAt": null,
     *         "attempts": [
     *           {
     *             "series": 1,
     *             "attempt": 1,
     *             "startedAt": "2026-11-23T09:30:21.100Z",
     *             "durationMs": 210,
     *             "statusCode": 200,
     *             "error": null,
     *             "responseBody": "ok",
     *             "signedContent": "1795000000.{\"id\":\"wh:9c5e1a8f-4b7d-4a23-8f61-2c9e5b3a7d08:agent.completed:5e7b1c9d-3a2f-4d86-b0e4-9c1a6f3e8d27\",\"event\":\"agent.completed\",…}",
     *             "requestHeaders": {
     *               "content-type": "application/json",
     *               "x-svc-event": "agent.completed",
     *               "x-svc-timestamp": "1795000000",
     *               "x-svc-signature": "sha256=5d41402abc4b2a76b9719d911017c592ae2c8d5c1a1f9b3c8c1e0b7b1a2c3d4e",
     *               "x-svc-delivery-id": "d7b2e6a4-9f1c-4d85-b3e0-5a8c2f4e1b97"
     *             }
     *           }
     *         ],
     *         "attemptCount": 1
     *       }
     *     }
     */
    Redelivery: {
      delivery: components['schemas']['WebhookDelivery'];
    };
  };
  responses: never;
  parameters: never;
  requestBodies: never;
  headers: never;
  pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
  liveness: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Alive */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @enum {string} */
            status: 'ok';
          };
        };
      };
      /** @description Error: INTERNAL */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  readiness: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Ready */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Readiness'];
        };
      };
      /** @description Error: INTERNAL */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description A dependency is down */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "status": "unavailable",
           *       "database": "up",
           *       "temporal": "down"
           *     }
           */
          'application/json': components['schemas']['Readiness'];
        };
      };
    };
  };
  signUp: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['Credentials'];
      };
    };
    responses: {
      /** @description Account created */
      201: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['UserEnvelope'];
        };
      };
      /** @description Error: INVALID_REQUEST, INVALID_JSON */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: FORBIDDEN */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: EMAIL_TAKEN */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: PAYLOAD_TOO_LARGE */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: UNSUPPORTED_MEDIA_TYPE */
      415: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: RATE_LIMITED */
      429: {
        headers: {
          /** @description Seconds until a request may succeed again. */
          'retry-after': string;
          /** @description Requests allowed in the window of the counter that refused. */
          'ratelimit-limit': string;
          /** @description Requests left in that window: 0. */
          'ratelimit-remaining': string;
          /** @description Seconds until that window resets. */
          'ratelimit-reset': string;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: INTERNAL */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: SERVICE_UNAVAILABLE */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  signIn: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['Credentials'];
      };
    };
    responses: {
      /** @description Signed in */
      200: {
        headers: {
          'set-cookie': string;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['UserEnvelope'];
        };
      };
      /** @description Error: INVALID_REQUEST, INVALID_JSON */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: UNAUTHORIZED */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: FORBIDDEN */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: PAYLOAD_TOO_LARGE */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: UNSUPPORTED_MEDIA_TYPE */
      415: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: RATE_LIMITED */
      429: {
        headers: {
          /** @description Seconds until a request may succeed again. */
          'retry-after': string;
          /** @description Requests allowed in the window of the counter that refused. */
          'ratelimit-limit': string;
          /** @description Requests left in that window: 0. */
          'ratelimit-remaining': string;
          /** @description Seconds until that window resets. */
          'ratelimit-reset': string;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: INTERNAL */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: SERVICE_UNAVAILABLE */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  signOut: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Signed out */
      204: {
        headers: {
          'set-cookie': string;
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description Error: UNAUTHORIZED */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: FORBIDDEN */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: INTERNAL */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: SERVICE_UNAVAILABLE */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  signOutEverywhere: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Every session ended */
      204: {
        headers: {
          'set-cookie': string;
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description Error: UNAUTHORIZED */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: FORBIDDEN */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: INTERNAL */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: SERVICE_UNAVAILABLE */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  getSession: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Signed in */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['UserEnvelope'];
        };
      };
      /** @description Error: UNAUTHORIZED */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: INTERNAL */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: SERVICE_UNAVAILABLE */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  listApiKeys: {
    parameters: {
      query?: {
        limit?: number;
        /** @description The `nextCursor` of the previous page. */
        cursor?: string;
      };
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Active keys */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiKeyList'];
        };
      };
      /** @description Error: INVALID_REQUEST */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: UNAUTHORIZED */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: INTERNAL */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: SERVICE_UNAVAILABLE */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  createApiKey: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['NewApiKey'];
      };
    };
    responses: {
      /** @description Key created */
      201: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['CreatedApiKey'];
        };
      };
      /** @description Error: INVALID_REQUEST, INVALID_JSON */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: UNAUTHORIZED */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: FORBIDDEN */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: PAYLOAD_TOO_LARGE */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: UNSUPPORTED_MEDIA_TYPE */
      415: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: LIMIT_REACHED */
      422: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: INTERNAL */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: SERVICE_UNAVAILABLE */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  revokeApiKey: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        keyId: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Revoked */
      204: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description Error: INVALID_REQUEST */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: UNAUTHORIZED */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: FORBIDDEN */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: KEY_NOT_FOUND */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: INTERNAL */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: SERVICE_UNAVAILABLE */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  listOAuthGrants: {
    parameters: {
      query?: {
        limit?: number;
        /** @description The `nextCursor` of the previous page. */
        cursor?: string;
      };
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Live grants */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['OAuthGrantList'];
        };
      };
      /** @description Error: INVALID_REQUEST */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: UNAUTHORIZED */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: INTERNAL */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: SERVICE_UNAVAILABLE */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  revokeOAuthGrant: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        grantId: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Revoked */
      204: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description Error: INVALID_REQUEST */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: UNAUTHORIZED */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: FORBIDDEN */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: NOT_FOUND */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: INTERNAL */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: SERVICE_UNAVAILABLE */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  listChats: {
    parameters: {
      query?: {
        limit?: number;
        /** @description The `nextCursor` of the previous page. */
        cursor?: string;
        /** @description Case-insensitive title search. */
        q?: string;
        /** @description Only favorites (true), or only others (false); all when left out. */
        favorite?: boolean;
      };
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description One page of chats */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ChatList'];
        };
      };
      /** @description Error: INVALID_REQUEST */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: UNAUTHORIZED */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: RATE_LIMITED */
      429: {
        headers: {
          /** @description Seconds until a request may succeed again. */
          'retry-after': string;
          /** @description Requests allowed in the window of the counter that refused. */
          'ratelimit-limit': string;
          /** @description Requests left in that window: 0. */
          'ratelimit-remaining': string;
          /** @description Seconds until that window resets. */
          'ratelimit-reset': string;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: INTERNAL */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: SERVICE_UNAVAILABLE */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  createChat: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: {
      content: {
        'application/json': components['schemas']['NewChat'];
      };
    };
    responses: {
      /** @description Chat created */
      201: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Chat'];
        };
      };
      /** @description Error: INVALID_REQUEST, INVALID_JSON */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: UNAUTHORIZED */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: PAYLOAD_TOO_LARGE */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: UNSUPPORTED_MEDIA_TYPE */
      415: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: RATE_LIMITED */
      429: {
        headers: {
          /** @description Seconds until a request may succeed again. */
          'retry-after': string;
          /** @description Requests allowed in the window of the counter that refused. */
          'ratelimit-limit': string;
          /** @description Requests left in that window: 0. */
          'ratelimit-remaining': string;
          /** @description Seconds until that window resets. */
          'ratelimit-reset': string;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: INTERNAL */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: SERVICE_UNAVAILABLE */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  getChat: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        chatId: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The chat */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Chat'];
        };
      };
      /** @description Error: INVALID_REQUEST */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: UNAUTHORIZED */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: CHAT_NOT_FOUND */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: RATE_LIMITED */
      429: {
        headers: {
          /** @description Seconds until a request may succeed again. */
          'retry-after': string;
          /** @description Requests allowed in the window of the counter that refused. */
          'ratelimit-limit': string;
          /** @description Requests left in that window: 0. */
          'ratelimit-remaining': string;
          /** @description Seconds until that window resets. */
          'ratelimit-reset': string;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: INTERNAL */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: SERVICE_UNAVAILABLE */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  deleteChat: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        chatId: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Deleted */
      204: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description Error: INVALID_REQUEST */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: UNAUTHORIZED */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: CHAT_NOT_FOUND */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: RATE_LIMITED */
      429: {
        headers: {
          /** @description Seconds until a request may succeed again. */
          'retry-after': string;
          /** @description Requests allowed in the window of the counter that refused. */
          'ratelimit-limit': string;
          /** @description Requests left in that window: 0. */
          'ratelimit-remaining': string;
          /** @description Seconds until that window resets. */
          'ratelimit-reset': string;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: INTERNAL */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: SERVICE_UNAVAILABLE */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  updateChat: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        chatId: string;
      };
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['ChatUpdate'];
      };
    };
    responses: {
      /** @description The updated chat */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Chat'];
        };
      };
      /** @description Error: INVALID_REQUEST, INVALID_JSON */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: UNAUTHORIZED */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: CHAT_NOT_FOUND */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: PAYLOAD_TOO_LARGE */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: UNSUPPORTED_MEDIA_TYPE */
      415: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: RATE_LIMITED */
      429: {
        headers: {
          /** @description Seconds until a request may succeed again. */
          'retry-after': string;
          /** @description Requests allowed in the window of the counter that refused. */
          'ratelimit-limit': string;
          /** @description Requests left in that window: 0. */
          'ratelimit-remaining': string;
          /** @description Seconds until that window resets. */
          'ratelimit-reset': string;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: INTERNAL */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: SERVICE_UNAVAILABLE */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  listMessages: {
    parameters: {
      query?: {
        limit?: number;
        /** @description The `nextCursor` of the previous page. */
        cursor?: string;
        /** @description Oldest first (`asc`), or newest first (`desc`: a long chat opens on its latest page); `nextCursor` goes on in the same order. */
        order?: 'asc' | 'desc';
      };
      header?: never;
      path: {
        chatId: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description One page of messages */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageList'];
        };
      };
      /** @description Error: INVALID_REQUEST */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: UNAUTHORIZED */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: CHAT_NOT_FOUND */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: RATE_LIMITED */
      429: {
        headers: {
          /** @description Seconds until a request may succeed again. */
          'retry-after': string;
          /** @description Requests allowed in the window of the counter that refused. */
          'ratelimit-limit': string;
          /** @description Requests left in that window: 0. */
          'ratelimit-remaining': string;
          /** @description Seconds until that window resets. */
          'ratelimit-reset': string;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: INTERNAL */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: SERVICE_UNAVAILABLE */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  forkChat: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        chatId: string;
      };
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['ForkRequest'];
      };
    };
    responses: {
      /** @description The new chat */
      201: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "id": "1c9f5e3a-8b2d-4a64-9e17-3f6b0d8a2c51",
           *       "title": "Lighthouse crops, take two",
           *       "isFavorite": false,
           *       "lastMessageAt": "2026-11-23T09:30:21.050Z",
           *       "lastMessageId": "4d2b8f6e-1a9c-4e53-b7d0-8c5a3e1f9b62",
           *       "settings": {
           *         "model": "claude",
           *         "maxSteps": 4
           *       },
           *       "createdAt": "2026-11-23T10:02:00.000Z",
           *       "updatedAt": "2026-11-23T10:02:00.000Z"
           *     }
           */
          'application/json': components['schemas']['Chat'];
        };
      };
      /** @description Error: INVALID_REQUEST, INVALID_JSON */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: UNAUTHORIZED */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: CHAT_NOT_FOUND, MESSAGE_NOT_FOUND */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: PAYLOAD_TOO_LARGE */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: UNSUPPORTED_MEDIA_TYPE */
      415: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: RATE_LIMITED */
      429: {
        headers: {
          /** @description Seconds until a request may succeed again. */
          'retry-after': string;
          /** @description Requests allowed in the window of the counter that refused. */
          'ratelimit-limit': string;
          /** @description Requests left in that window: 0. */
          'ratelimit-remaining': string;
          /** @description Seconds until that window resets. */
          'ratelimit-reset': string;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: INTERNAL */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: SERVICE_UNAVAILABLE */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  uploadFiles: {
    parameters: {
      query?: never;
      header?: {
        /** @description Makes a retry safe: the first answer to this key is kept 24 hours and replayed to any retry of the same request (header `Idempotent-Replayed: true`), which is not run, charged or announced again. Per user; 1–255 visible ASCII characters, e.g. a UUID. */
        'idempotency-key'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'multipart/form-data':
          | {
              /**
               * Format: uuid
               * @description Attaches the files to this chat (the caller's); omitting it creates no chat.
               */
              chatId?: string;
              /**
               * Format: binary
               * @description An image, video or audio file, at most 20 MB; repeat the field for several (8 files in all).
               */
              file?: string;
              /** @description Another way to send several files. */
              files?: string[];
            }
          | unknown
          | unknown;
      };
    };
    responses: {
      /** @description Stored */
      201: {
        headers: {
          /** @description Set when this is the stored first answer to the same Idempotency-Key. */
          'Idempotent-Replayed'?: 'true';
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['UploadResult'];
        };
      };
      /** @description Error: INVALID_REQUEST, TOO_MANY_FILES */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: UNAUTHORIZED */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: CHAT_NOT_FOUND */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: IDEMPOTENCY_IN_PROGRESS */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: PAYLOAD_TOO_LARGE */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: UNSUPPORTED_MEDIA_TYPE */
      415: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: IDEMPOTENCY_KEY_REUSED, LIMIT_REACHED */
      422: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: RATE_LIMITED */
      429: {
        headers: {
          /** @description Seconds until a request may succeed again. */
          'retry-after': string;
          /** @description Requests allowed in the window of the counter that refused. */
          'ratelimit-limit': string;
          /** @description Requests left in that window: 0. */
          'ratelimit-remaining': string;
          /** @description Seconds until that window resets. */
          'ratelimit-reset': string;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: INTERNAL */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: SERVICE_UNAVAILABLE */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  getFile: {
    parameters: {
      query?: {
        /** @description When the URL stops working (unix seconds; FILE_URL_TTL after it was signed). */
        exp?: string;
        /** @description HMAC signature of the key and `exp`. */
        sig?: string;
      };
      header?: never;
      path: {
        /** @description The storage key. */
        key: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The file, with its stored content type */
      200: {
        headers: {
          'content-disposition': string;
          'cache-control': string;
          etag: string;
          'last-modified': string;
          'accept-ranges': string;
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description The one byte range a `Range` header asked for (several ranges get the whole file) */
      206: {
        headers: {
          'content-range': string;
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description `If-None-Match` (or `If-Modified-Since`) names the stored version */
      304: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description Error: INVALID_REQUEST */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: NOT_FOUND */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: RANGE_NOT_SATISFIABLE */
      416: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: INTERNAL */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: SERVICE_UNAVAILABLE */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  sendTurn: {
    parameters: {
      query?: never;
      header?: {
        /** @description Makes a retry safe: the first answer to this key is kept 24 hours and replayed to any retry of the same request (header `Idempotent-Replayed: true`), which is not run, charged or announced again. Per user; 1–255 visible ASCII characters, e.g. a UUID. */
        'idempotency-key'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['CompletionRequest'];
        'multipart/form-data': components['schemas']['CompletionForm'];
      };
    };
    responses: {
      /** @description Turn accepted */
      202: {
        headers: {
          /** @description Set when this is the stored first answer to the same Idempotency-Key. */
          'Idempotent-Replayed'?: 'true';
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['QueuedTurn'];
        };
      };
      /** @description Error: INVALID_REQUEST, INVALID_JSON, TOO_MANY_FILES */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: UNAUTHORIZED */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: CHAT_NOT_FOUND, ATTACHMENT_NOT_FOUND */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: IDEMPOTENCY_IN_PROGRESS, RUN_ACTIVE, QUEUE_FULL */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: PAYLOAD_TOO_LARGE */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: UNSUPPORTED_MEDIA_TYPE */
      415: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: IDEMPOTENCY_KEY_REUSED, LIMIT_REACHED */
      422: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: RATE_LIMITED, ACTIVE_LIMIT */
      429: {
        headers: {
          /** @description Seconds until a request may succeed again. */
          'retry-after': string;
          /** @description With RATE_LIMITED. */
          'ratelimit-limit'?: string;
          /** @description With RATE_LIMITED. */
          'ratelimit-remaining'?: string;
          /** @description With RATE_LIMITED. */
          'ratelimit-reset'?: string;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: INTERNAL */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: SERVICE_UNAVAILABLE */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  listRuns: {
    parameters: {
      query?: {
        limit?: number;
        /** @description The `nextCursor` of the previous page. */
        cursor?: string;
        /** @description Only runs in this status, or in any of several separated by commas (QUEUED,RUNNING,WAITING: the active ones). One of QUEUED, RUNNING, WAITING, COMPLETE, FAILED, CANCELLED. */
        status?: string;
        /** @description Only runs created at or after this instant. */
        since?: string;
        /** @description Only runs created before this instant; not before `since`. */
        until?: string;
        /** @description Only runs carrying every one of these pairs: `metadata[customer]=acme&metadata[ticket]=T-1042`. */
        metadata?: {
          [key: string]: string;
        };
      };
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description One page of runs */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['RunList'];
        };
      };
      /** @description Error: INVALID_REQUEST */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: UNAUTHORIZED */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: RATE_LIMITED */
      429: {
        headers: {
          /** @description Seconds until a request may succeed again. */
          'retry-after': string;
          /** @description Requests allowed in the window of the counter that refused. */
          'ratelimit-limit': string;
          /** @description Requests left in that window: 0. */
          'ratelimit-remaining': string;
          /** @description Seconds until that window resets. */
          'ratelimit-reset': string;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: INTERNAL */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: SERVICE_UNAVAILABLE */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  listChatRuns: {
    parameters: {
      query?: {
        limit?: number;
        /** @description The `nextCursor` of the previous page. */
        cursor?: string;
        /** @description Only runs in this status, or in any of several separated by commas (QUEUED,RUNNING,WAITING: the active ones). One of QUEUED, RUNNING, WAITING, COMPLETE, FAILED, CANCELLED. */
        status?: string;
        /** @description Only runs created at or after this instant. */
        since?: string;
        /** @description Only runs created before this instant; not before `since`. */
        until?: string;
        /** @description Only runs carrying every one of these pairs: `metadata[customer]=acme&metadata[ticket]=T-1042`. */
        metadata?: {
          [key: string]: string;
        };
      };
      header?: never;
      path: {
        chatId: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description One page of the chat’s runs */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['RunList'];
        };
      };
      /** @description Error: INVALID_REQUEST */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: UNAUTHORIZED */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: CHAT_NOT_FOUND */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: RATE_LIMITED */
      429: {
        headers: {
          /** @description Seconds until a request may succeed again. */
          'retry-after': string;
          /** @description Requests allowed in the window of the counter that refused. */
          'ratelimit-limit': string;
          /** @description Requests left in that window: 0. */
          'ratelimit-remaining': string;
          /** @description Seconds until that window resets. */
          'ratelimit-reset': string;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: INTERNAL */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: SERVICE_UNAVAILABLE */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  regenerateMessage: {
    parameters: {
      query?: never;
      header?: {
        /** @description Makes a retry safe: the first answer to this key is kept 24 hours and replayed to any retry of the same request (header `Idempotent-Replayed: true`), which is not run, charged or announced again. Per user; 1–255 visible ASCII characters, e.g. a UUID. */
        'idempotency-key'?: string;
      };
      path: {
        chatId: string;
        messageId: string;
      };
      cookie?: never;
    };
    requestBody?: {
      content: {
        'application/json': components['schemas']['RegenerateRequest'];
      };
    };
    responses: {
      /** @description The new run is accepted */
      202: {
        headers: {
          /** @description Set when this is the stored first answer to the same Idempotency-Key. */
          'Idempotent-Replayed'?: 'true';
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "chatId": "3f6a2b8c-1d4e-4f70-8a93-5c2e7b1d9f04",
           *       "messageId": "8d1e4c7a-2b5f-4e90-a3c6-7f0b2d5e8a19",
           *       "runId": "7a3d9e1b-5c8f-4b26-a1e4-6d0f3b8c2e95",
           *       "triggerRunId": null,
           *       "status": "queued",
           *       "queuePosition": null
           *     }
           */
          'application/json': components['schemas']['QueuedTurn'];
        };
      };
      /** @description Error: INVALID_REQUEST, INVALID_JSON */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: UNAUTHORIZED */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: CHAT_NOT_FOUND, MESSAGE_NOT_FOUND */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: IDEMPOTENCY_IN_PROGRESS, NOT_LATEST_TURN, RUN_ACTIVE */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: PAYLOAD_TOO_LARGE */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: UNSUPPORTED_MEDIA_TYPE */
      415: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: IDEMPOTENCY_KEY_REUSED, LIMIT_REACHED */
      422: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: RATE_LIMITED, ACTIVE_LIMIT */
      429: {
        headers: {
          /** @description Seconds until a request may succeed again. */
          'retry-after': string;
          /** @description With RATE_LIMITED. */
          'ratelimit-limit'?: string;
          /** @description With RATE_LIMITED. */
          'ratelimit-remaining'?: string;
          /** @description With RATE_LIMITED. */
          'ratelimit-reset'?: string;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: INTERNAL */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: SERVICE_UNAVAILABLE */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  getRun: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        chatId: string;
        runId: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Run snapshot */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['RunSnapshot'];
        };
      };
      /** @description Error: INVALID_REQUEST */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: UNAUTHORIZED */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: CHAT_NOT_FOUND, RUN_NOT_FOUND */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: RATE_LIMITED */
      429: {
        headers: {
          /** @description Seconds until a request may succeed again. */
          'retry-after': string;
          /** @description Requests allowed in the window of the counter that refused. */
          'ratelimit-limit': string;
          /** @description Requests left in that window: 0. */
          'ratelimit-remaining': string;
          /** @description Seconds until that window resets. */
          'ratelimit-reset': string;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: INTERNAL */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: SERVICE_UNAVAILABLE */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  streamRun: {
    parameters: {
      query?: never;
      header?: {
        /** @description Resume after this event: what follows it, without the snapshot. */
        'last-event-id'?: string;
      };
      path: {
        chatId: string;
        runId: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The event stream */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'text/event-stream': components['schemas']['RunStreamEvent'];
        };
      };
      /** @description Error: INVALID_REQUEST */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: UNAUTHORIZED */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: CHAT_NOT_FOUND, RUN_NOT_FOUND */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: RATE_LIMITED, ACTIVE_LIMIT */
      429: {
        headers: {
          /** @description Seconds until a request may succeed again. */
          'retry-after': string;
          /** @description With RATE_LIMITED. */
          'ratelimit-limit'?: string;
          /** @description With RATE_LIMITED. */
          'ratelimit-remaining'?: string;
          /** @description With RATE_LIMITED. */
          'ratelimit-reset'?: string;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: INTERNAL */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: SERVICE_UNAVAILABLE */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  streamChat: {
    parameters: {
      query?: never;
      header?: {
        /** @description Resume after this event: what follows it, without the snapshot. */
        'last-event-id'?: string;
      };
      path: {
        chatId: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The event stream */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'text/event-stream': components['schemas']['ChatStreamEvent'];
        };
      };
      /** @description Error: INVALID_REQUEST */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: UNAUTHORIZED */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: CHAT_NOT_FOUND */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: RATE_LIMITED, ACTIVE_LIMIT */
      429: {
        headers: {
          /** @description Seconds until a request may succeed again. */
          'retry-after': string;
          /** @description With RATE_LIMITED. */
          'ratelimit-limit'?: string;
          /** @description With RATE_LIMITED. */
          'ratelimit-remaining'?: string;
          /** @description With RATE_LIMITED. */
          'ratelimit-reset'?: string;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: INTERNAL */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: SERVICE_UNAVAILABLE */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  cancelRun: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        chatId: string;
        runId: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The cancel is recorded (cancelRequestedAt): the run ends CANCELLED within moments */
      202: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['RunSnapshot'];
        };
      };
      /** @description Error: INVALID_REQUEST */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: UNAUTHORIZED */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: CHAT_NOT_FOUND, RUN_NOT_FOUND */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: RUN_NOT_ACTIVE */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: RATE_LIMITED */
      429: {
        headers: {
          /** @description Seconds until a request may succeed again. */
          'retry-after': string;
          /** @description Requests allowed in the window of the counter that refused. */
          'ratelimit-limit': string;
          /** @description Requests left in that window: 0. */
          'ratelimit-remaining': string;
          /** @description Seconds until that window resets. */
          'ratelimit-reset': string;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: INTERNAL */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: SERVICE_UNAVAILABLE */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  completeWaitpoint: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        chatId: string;
        runId: string;
        waitpointId: string;
      };
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['WaitpointDecision'];
      };
    };
    responses: {
      /** @description Decision accepted */
      202: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Waitpoint'];
        };
      };
      /** @description Error: INVALID_REQUEST, INVALID_JSON */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: UNAUTHORIZED */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: CHAT_NOT_FOUND, RUN_NOT_FOUND, WAITPOINT_NOT_FOUND */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: RUN_NOT_ACTIVE, WAITPOINT_RESOLVED, PLAN_CHANGED */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: PAYLOAD_TOO_LARGE */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: UNSUPPORTED_MEDIA_TYPE */
      415: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: RATE_LIMITED */
      429: {
        headers: {
          /** @description Seconds until a request may succeed again. */
          'retry-after': string;
          /** @description Requests allowed in the window of the counter that refused. */
          'ratelimit-limit': string;
          /** @description Requests left in that window: 0. */
          'ratelimit-remaining': string;
          /** @description Seconds until that window resets. */
          'ratelimit-reset': string;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: INTERNAL */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: SERVICE_UNAVAILABLE */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  tool_crop_image: {
    parameters: {
      query?: never;
      header?: {
        /** @description Makes a retry safe: the first answer to this key is kept 24 hours and replayed to any retry of the same request (header `Idempotent-Replayed: true`), which is not run, charged or announced again. Per user; 1–255 visible ASCII characters, e.g. a UUID. */
        'idempotency-key'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['CropImageInput'];
      };
    };
    responses: {
      /** @description The tool result. */
      200: {
        headers: {
          /** @description Set when this is the stored first answer to the same Idempotency-Key. */
          'Idempotent-Replayed'?: 'true';
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ToolResult'];
        };
      };
      /** @description Error: INVALID_REQUEST, INVALID_JSON, INVALID_RECTANGLE */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: UNAUTHORIZED */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: INSUFFICIENT_CREDITS */
      402: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: ATTACHMENT_NOT_FOUND */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: IDEMPOTENCY_IN_PROGRESS */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: PAYLOAD_TOO_LARGE */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: UNSUPPORTED_MEDIA_TYPE */
      415: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: IDEMPOTENCY_KEY_REUSED, LIMIT_REACHED, MEDIA_UNAVAILABLE */
      422: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: RATE_LIMITED, ACTIVE_LIMIT */
      429: {
        headers: {
          /** @description Seconds until a request may succeed again. */
          'retry-after': string;
          /** @description With RATE_LIMITED. */
          'ratelimit-limit'?: string;
          /** @description With RATE_LIMITED. */
          'ratelimit-remaining'?: string;
          /** @description With RATE_LIMITED. */
          'ratelimit-reset'?: string;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: INTERNAL */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: PROVIDER_ERROR */
      502: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: SERVICE_UNAVAILABLE */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: TIMEOUT */
      504: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  tool_ai_image_2: {
    parameters: {
      query?: never;
      header?: {
        /** @description Makes a retry safe: the first answer to this key is kept 24 hours and replayed to any retry of the same request (header `Idempotent-Replayed: true`), which is not run, charged or announced again. Per user; 1–255 visible ASCII characters, e.g. a UUID. */
        'idempotency-key'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['AiImage2Input'];
      };
    };
    responses: {
      /** @description The tool result. */
      200: {
        headers: {
          /** @description Set when this is the stored first answer to the same Idempotency-Key. */
          'Idempotent-Replayed'?: 'true';
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ToolResult'];
        };
      };
      /** @description Error: INVALID_REQUEST, INVALID_JSON */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: UNAUTHORIZED */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: INSUFFICIENT_CREDITS */
      402: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: IDEMPOTENCY_IN_PROGRESS */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: PAYLOAD_TOO_LARGE */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: UNSUPPORTED_MEDIA_TYPE */
      415: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: IDEMPOTENCY_KEY_REUSED, LIMIT_REACHED, MEDIA_UNAVAILABLE */
      422: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: RATE_LIMITED, ACTIVE_LIMIT */
      429: {
        headers: {
          /** @description Seconds until a request may succeed again. */
          'retry-after': string;
          /** @description With RATE_LIMITED. */
          'ratelimit-limit'?: string;
          /** @description With RATE_LIMITED. */
          'ratelimit-remaining'?: string;
          /** @description With RATE_LIMITED. */
          'ratelimit-reset'?: string;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: INTERNAL */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: PROVIDER_ERROR */
      502: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: SERVICE_UNAVAILABLE, PROVIDER_NOT_CONFIGURED */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: TIMEOUT */
      504: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  tool_merge_videos: {
    parameters: {
      query?: never;
      header?: {
        /** @description Makes a retry safe: the first answer to this key is kept 24 hours and replayed to any retry of the same request (header `Idempotent-Replayed: true`), which is not run, charged or announced again. Per user; 1–255 visible ASCII characters, e.g. a UUID. */
        'idempotency-key'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['MergeVideosInput'];
      };
    };
    responses: {
      /** @description The tool result. */
      200: {
        headers: {
          /** @description Set when this is the stored first answer to the same Idempotency-Key. */
          'Idempotent-Replayed'?: 'true';
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ToolResult'];
        };
      };
      /** @description Error: INVALID_REQUEST, INVALID_JSON */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: UNAUTHORIZED */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: INSUFFICIENT_CREDITS */
      402: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: IDEMPOTENCY_IN_PROGRESS */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: PAYLOAD_TOO_LARGE */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: UNSUPPORTED_MEDIA_TYPE */
      415: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: IDEMPOTENCY_KEY_REUSED, LIMIT_REACHED, MEDIA_UNAVAILABLE */
      422: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: RATE_LIMITED, ACTIVE_LIMIT */
      429: {
        headers: {
          /** @description Seconds until a request may succeed again. */
          'retry-after': string;
          /** @description With RATE_LIMITED. */
          'ratelimit-limit'?: string;
          /** @description With RATE_LIMITED. */
          'ratelimit-remaining'?: string;
          /** @description With RATE_LIMITED. */
          'ratelimit-reset'?: string;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: INTERNAL */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: PROVIDER_ERROR */
      502: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: SERVICE_UNAVAILABLE */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: TIMEOUT */
      504: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  listWebhookEndpoints: {
    parameters: {
      query?: {
        limit?: number;
        /** @description The `nextCursor` of the previous page. */
        cursor?: string;
      };
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description A page of endpoints */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['WebhookEndpointList'];
        };
      };
      /** @description Error: INVALID_REQUEST */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: UNAUTHORIZED */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: INTERNAL */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: SERVICE_UNAVAILABLE */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  createWebhookEndpoint: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['NewWebhookEndpoint'];
      };
    };
    responses: {
      /** @description Created */
      201: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['CreatedWebhookEndpoint'];
        };
      };
      /** @description Error: INVALID_REQUEST, INVALID_JSON */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: UNAUTHORIZED */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: FORBIDDEN */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: PAYLOAD_TOO_LARGE */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: UNSUPPORTED_MEDIA_TYPE */
      415: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: LIMIT_REACHED */
      422: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: INTERNAL */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: SERVICE_UNAVAILABLE */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  rotateWebhookSecret: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        endpointId: string;
      };
      cookie?: never;
    };
    requestBody?: {
      content: {
        'application/json': components['schemas']['SecretRotation'];
      };
    };
    responses: {
      /** @description Rotated */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['CreatedWebhookEndpoint'];
        };
      };
      /** @description Error: INVALID_REQUEST, INVALID_JSON */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: UNAUTHORIZED */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: FORBIDDEN */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: WEBHOOK_ENDPOINT_NOT_FOUND */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: PAYLOAD_TOO_LARGE */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: UNSUPPORTED_MEDIA_TYPE */
      415: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: INTERNAL */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: SERVICE_UNAVAILABLE */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  deleteWebhookEndpoint: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        endpointId: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Removed */
      204: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description Error: INVALID_REQUEST */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: UNAUTHORIZED */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: FORBIDDEN */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: WEBHOOK_ENDPOINT_NOT_FOUND */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: INTERNAL */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: SERVICE_UNAVAILABLE */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  listWebhookDeliveries: {
    parameters: {
      query?: {
        limit?: number;
        /** @description The `nextCursor` of the previous page. */
        cursor?: string;
      };
      header?: never;
      path: {
        endpointId: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description A page of deliveries */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['WebhookDeliveryList'];
        };
      };
      /** @description Error: INVALID_REQUEST */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: UNAUTHORIZED */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: WEBHOOK_ENDPOINT_NOT_FOUND */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: INTERNAL */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: SERVICE_UNAVAILABLE */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  redeliverWebhook: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        deliveryId: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description A new series started */
      202: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Redelivery'];
        };
      };
      /** @description Error: INVALID_REQUEST */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: UNAUTHORIZED */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: FORBIDDEN */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: DELIVERY_NOT_FOUND */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: DELIVERY_IN_PROGRESS */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: RATE_LIMITED */
      429: {
        headers: {
          /** @description Seconds until a request may succeed again. */
          'retry-after': string;
          /** @description Requests allowed in the window of the counter that refused. */
          'ratelimit-limit': string;
          /** @description Requests left in that window: 0. */
          'ratelimit-remaining': string;
          /** @description Seconds until that window resets. */
          'ratelimit-reset': string;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: INTERNAL */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: SERVICE_UNAVAILABLE */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  getOpenApiDocument: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The document */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @enum {string} */
            openapi: '3.1.0';
          } & {
            [key: string]: unknown;
          };
        };
      };
      /** @description Error: INTERNAL */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  getApiReference: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description An HTML page */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description Error: INTERNAL */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  getApiReferenceAsset: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        file: 'api-reference-1.72.1.js' | 'init.js';
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description A script */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description Error: INVALID_REQUEST */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Error: INTERNAL */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  webhook_agent_started: {
    parameters: {
      query?: never;
      header: {
        /** @description `sha256=` + hex HMAC-SHA256, keyed with the endpoint secret, over `<x-svc-timestamp>.<raw body>`. */
        'x-svc-signature': string;
        /** @description Unix seconds when this attempt was signed. */
        'x-svc-timestamp': string;
        /** @description The event name, as in the body. */
        'x-svc-event': 'agent.started' | 'agent.completed' | 'agent.failed' | 'tool.completed';
        /** @description The delivery, the same on every retry of it. */
        'x-svc-delivery-id': string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody?: {
      content: {
        'application/json': components['schemas']['WebhookEnvelope_agent_started'];
      };
    };
    responses: {
      /** @description Any 2xx: delivered. Anything else, or no answer in 10 s: retried with backoff. */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
    };
  };
  webhook_agent_completed: {
    parameters: {
      query?: never;
      header: {
        /** @description `sha256=` + hex HMAC-SHA256, keyed with the endpoint secret, over `<x-svc-timestamp>.<raw body>`. */
        'x-svc-signature': string;
        /** @description Unix seconds when this attempt was signed. */
        'x-svc-timestamp': string;
        /** @description The event name, as in the body. */
        'x-svc-event': 'agent.started' | 'agent.completed' | 'agent.failed' | 'tool.completed';
        /** @description The delivery, the same on every retry of it. */
        'x-svc-delivery-id': string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody?: {
      content: {
        'application/json': components['schemas']['WebhookEnvelope_agent_completed'];
      };
    };
    responses: {
      /** @description Any 2xx: delivered. Anything else, or no answer in 10 s: retried with backoff. */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
    };
  };
  webhook_agent_failed: {
    parameters: {
      query?: never;
      header: {
        /** @description `sha256=` + hex HMAC-SHA256, keyed with the endpoint secret, over `<x-svc-timestamp>.<raw body>`. */
        'x-svc-signature': string;
        /** @description Unix seconds when this attempt was signed. */
        'x-svc-timestamp': string;
        /** @description The event name, as in the body. */
        'x-svc-event': 'agent.started' | 'agent.completed' | 'agent.failed' | 'tool.completed';
        /** @description The delivery, the same on every retry of it. */
        'x-svc-delivery-id': string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody?: {
      content: {
        'application/json': components['schemas']['WebhookEnvelope_agent_failed'];
      };
    };
    responses: {
      /** @description Any 2xx: delivered. Anything else, or no answer in 10 s: retried with backoff. */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
    };
  };
  webhook_tool_completed: {
    parameters: {
      query?: never;
      header: {
        /** @description `sha256=` + hex HMAC-SHA256, keyed with the endpoint secret, over `<x-svc-timestamp>.<raw body>`. */
        'x-svc-signature': string;
        /** @description Unix seconds when this attempt was signed. */
        'x-svc-timestamp': string;
        /** @description The event name, as in the body. */
        'x-svc-event': 'agent.started' | 'agent.completed' | 'agent.failed' | 'tool.completed';
        /** @description The delivery, the same on every retry of it. */
        'x-svc-delivery-id': string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody?: {
      content: {
        'application/json': components['schemas']['WebhookEnvelope_tool_completed'];
      };
    };
    responses: {
      /** @description Any 2xx: delivered. Anything else, or no answer in 10 s: retried with backoff. */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
    };
  };
}
