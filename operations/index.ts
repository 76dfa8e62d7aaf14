import { createNotificationHub } from '../core/db/notification-hub';
import { createChatsOperations } from './chats';
import type { OperationDeps } from './deps';
import { createFilesOperations } from './files';
import { createHealthOperations } from './health';
import { createIdentityOperations } from './identity';
import { userLimits } from './limits';
import { createOAuthOperations } from './oauth';
import { createRunsOperations } from './runs';
import { createStreams } from './streams';
import { createToolsOperations } from './tools';
import { createUploadsOperations } from './uploads';
import { createWebhooksOperations } from './webhooks';

export type { Caller, OperationDeps } from './deps';

/**
 * Every operation of the service, one module per feature, built once per process. A transport
 * (REST, MCP, the console) parses its input, calls one of these with the caller, and maps the
 * typed result or the AppError it throws; none holds logic of its own.
 */
export function createOperations(deps: OperationDeps) {
  // The one LISTEN connection of the process: run streams, remembered polls, API keys, tool calls,
  // console sessions, OAuth grants.
  const hub = createNotificationHub({
    url: deps.config.DATABASE_URL,
    logger: deps.logger,
    channels: ['run_events', 'chat_events', 'api_keys', 'tool_calls', 'sessions', 'oauth_grants'],
  });
  const streams = createStreams(deps, hub);
  const runs = createRunsOperations(deps, hub, streams);
  return {
    identity: createIdentityOperations(deps, hub),
    oauth: createOAuthOperations(deps),
    chats: createChatsOperations(deps, runs, streams),
    runs,
    tools: createToolsOperations(deps, hub),
    uploads: createUploadsOperations(deps),
    webhooks: createWebhooksOperations(deps),
    files: createFilesOperations(deps),
    health: createHealthOperations(deps),
    /** The per-user counters public calls consume, whatever the credential and the transport. */
    limits: userLimits(deps.config),
    /** Lets sends' workflow starts end, then closes the listening connection. */
    async close(): Promise<void> {
      await runs.close();
      await hub.close();
    },
  };
}

export type Operations = ReturnType<typeof createOperations>;
