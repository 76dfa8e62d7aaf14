import type { Config } from '../../core/config/config';
import type { Database } from '../../core/db/client';
import type { Logger } from '../../core/logging/logger';
import type { GuardedHttp } from '../../core/net/guarded-http';
import type { ObjectStorage } from '../../core/storage/storage';
import type { TemporalClientHandle } from '../../core/temporal/connection';

/** Everything the gateway's routes use, built once by main.ts (or by a test). */
export interface GatewayDeps {
  config: Config;
  db: Database;
  temporal: TemporalClientHandle;
  logger: Logger;
  storage: ObjectStorage;
  http: GuardedHttp;
}
