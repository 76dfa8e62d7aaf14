import { Client } from 'pg';
import type { Logger } from '../logging/logger';

/** The channel the run_events triggers notify on, with the run's id as the payload. */
const CHANNEL = 'run_events';
/** After a lost connection, how long before listening again. */
const RECONNECT_AFTER_MS = 1_000;

export interface RunEventHub {
  /**
   * Calls `wake` whenever the run may have new events (and after the listening connection was
   * lost, since notifications sent meanwhile are gone). Returns the unsubscribe.
   */
  subscribe(runId: string, wake: () => void): () => void;
  close(): Promise<void>;
}

/**
 * One LISTEN connection per process, opened with the first stream, fanned out in process by run
 * id: a thousand streams of a gateway cost one PostgreSQL connection, not a thousand. A
 * notification only says "look": the stream reads the events themselves from the table, so a
 * lost or doubled notification cannot lose or repeat one.
 */
export function createRunEventHub(options: { url: string; logger: Logger }): RunEventHub {
  const subscribers = new Map<string, Set<() => void>>();
  let client: Client | undefined;
  let connecting: Promise<void> | undefined;
  let retry: NodeJS.Timeout | undefined;
  let closed = false;

  const wakeAll = () => {
    for (const set of subscribers.values()) for (const wake of set) wake();
  };

  const connect = (): Promise<void> => {
    connecting ??= (async () => {
      const next = new Client({ connectionString: options.url });
      next.on('notification', (msg) => {
        for (const wake of subscribers.get(msg.payload ?? '') ?? []) wake();
      });
      next.on('error', (err) => {
        options.logger.warn({ err }, 'run event listener lost its connection');
        lost(next);
      });
      next.on('end', () => lost(next));
      try {
        await next.connect();
        await next.query(`LISTEN ${CHANNEL}`);
        client = next;
        // Whatever was notified before this connection listened is read now.
        wakeAll();
      } catch (err) {
        options.logger.warn({ err }, 'run event listener could not connect');
        await next.end().catch(() => undefined);
        scheduleRetry();
      } finally {
        connecting = undefined;
      }
    })();
    return connecting;
  };

  const scheduleRetry = () => {
    if (closed || retry) return;
    retry = setTimeout(() => {
      retry = undefined;
      if (subscribers.size) void connect();
    }, RECONNECT_AFTER_MS);
    retry.unref();
  };

  const lost = (which: Client) => {
    if (client !== which) return;
    client = undefined;
    void which.end().catch(() => undefined);
    wakeAll();
    scheduleRetry();
  };

  return {
    subscribe(runId, wake) {
      const set = subscribers.get(runId) ?? new Set();
      set.add(wake);
      subscribers.set(runId, set);
      if (!client && !closed) void connect();
      return () => {
        set.delete(wake);
        if (!set.size) subscribers.delete(runId);
      };
    },
    async close() {
      closed = true;
      clearTimeout(retry);
      await connecting;
      const last = client;
      client = undefined;
      await last?.end().catch(() => undefined);
    },
  };
}
