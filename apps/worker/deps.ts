import type { Config } from '../../core/config/config';
import type { Database } from '../../core/db/client';
import type { Logger } from '../../core/logging/logger';
import type { TemporalClientHandle } from '../../core/temporal/connection';

/** What the worker's activities are built from, once per process. */
export interface WorkerDeps {
  config: Config;
  db: Database;
  temporal: TemporalClientHandle;
  logger: Logger;
}
