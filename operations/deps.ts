import type { OAuthScope } from '../core/auth/scopes';
import type { Config } from '../core/config/config';
import type { Database } from '../core/db/client';
import type { Logger } from '../core/logging/logger';
import type { GuardedHttp } from '../core/net/guarded-http';
import type { Transport } from '../core/schemas/common';
import type { ObjectStorage } from '../core/storage/storage';
import type { TemporalClientHandle } from '../core/temporal/connection';

/** What the operations are built from, once per process (a gateway, or a test). */
export interface OperationDeps {
  config: Config;
  db: Database;
  temporal: TemporalClientHandle;
  logger: Logger;
  storage: ObjectStorage;
  http: GuardedHttp;
}

/**
 * Who an operation acts for. Every operation scopes what it reads and writes to `userId`: another
 * user's ids are as if they did not exist. The transport that authenticated the caller says how.
 */
export interface Caller {
  userId: string;
  /** Set when the caller came with an API key (public routes, MCP). */
  apiKeyId?: string;
  /** Set when the caller came with an OAuth access token (MCP clients that sign in). */
  oauthGrantId?: string;
  /** What that access token allows (see requireScopes); unset for API keys and sessions: everything. */
  scopes?: readonly OAuthScope[];
  /** Set when the caller came with the signed-in session (management routes, the console). */
  sessionId?: string;
  /** The transport, for the records operators read (the run's summary in Temporal, logs). */
  via: Transport;
}
