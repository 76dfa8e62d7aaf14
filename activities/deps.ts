import type { Config } from '../core/config/config';
import type { Database } from '../core/db/client';
import type { NotificationHub } from '../core/db/notification-hub';
import type { Logger } from '../core/logging/logger';
import type { ModelProvider } from '../core/model/types';
import type { GuardedHttp } from '../core/net/guarded-http';
import type { ObjectStorage } from '../core/storage/storage';
import type { RecordedDelivery } from '../core/webhooks/store';

/** What the activities are built from, once per worker process; the worker supplies it. */
export interface ActivityDeps {
  config: Config;
  db: Database;
  /**
   * Starts the delivery workflows of the events a committed statement recorded; the worker gives
   * its own (operations/temporal.ts, over its own connection: each starts eagerly, on this worker).
   */
  startDeliveries(deliveries: readonly RecordedDelivery[]): Promise<void>;
  logger: Logger;
  storage: ObjectStorage;
  http: GuardedHttp;
  /** Undefined when no model provider is configured: runs then fail with PROVIDER_NOT_CONFIGURED. */
  model: ModelProvider | undefined;
  /** The worker's LISTEN connection, on `run_cancels`: a step hears its run's cancel at once. */
  notifications: NotificationHub;
  /**
   * Aborted once the worker, asked to stop, has given its work in flight SHUTDOWN_GRACE: a local
   * model step still running then hands its run to another worker (agentStep).
   */
  stopping: AbortSignal;
}
