import type { Config } from '../core/config/config';
import type { Database } from '../core/db/client';
import type { NotificationHub } from '../core/db/notification-hub';
import type { Logger } from '../core/logging/logger';
import type { ModelCatalog } from '../core/model/catalog';
import type { GuardedHttp } from '../core/net/guarded-http';
import type { ObjectStorage } from '../core/storage/storage';
import type { WorkerTemporalClient } from '../core/temporal/connection';
import type { FirstAttempts } from '../workflows/client';

/** What the activities are built from, once per worker process; the worker supplies it. */
export interface ActivityDeps {
  config: Config;
  db: Database;
  /** Over the worker's own connection: the deliveries activities start begin on this worker. */
  temporal: WorkerTemporalClient;
  logger: Logger;
  storage: ObjectStorage;
  http: GuardedHttp;
  /** The models offered (MODELS): a run whose model is not among them fails with PROVIDER_NOT_CONFIGURED. */
  models: ModelCatalog;
  /**
   * The worker's LISTEN connection, on `run_cancels` (a step hears its run's cancel at once) and
   * `tool_offers` (the crops gateways offer its first attempts).
   */
  notifications: NotificationHub;
  /**
   * Aborted once the worker, asked to stop, has given its work in flight SHUTDOWN_GRACE: a local
   * model step still running then hands its run to another worker (agentStep).
   */
  stopping: AbortSignal;
  /**
   * Posts the first attempt of the deliveries the activities start (createWorker sets it; a test's
   * group without it leaves every attempt to the delivery workflow).
   */
  firstAttempts?: FirstAttempts;
}
