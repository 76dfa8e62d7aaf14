import { Client } from 'pg';
import type { Logger } from '../logging/logger';

/**
 * The channels the service's triggers notify on, each with an id as the payload: `run_events`
 * the run whose stream (and so snapshot) changed (migration run_events), `chat_events` the chat one
 * of whose runs did (migration chat_events), `api_keys` the key that
 * was revoked or deleted (migration api_key_notify), `run_cancels` the run whose cancel was just
 * recorded (migration run_cancel_notify), `tool_calls` the direct tool call whose success was just
 * recorded (migration tool_call_notify), `sessions` the console session that ended (migration
 * session_notify), `oauth_grants` the OAuth grant that was revoked or deleted (migration
 * oauth_grant_notify).
 */
export type Channel =
  'run_events' | 'chat_events' | 'api_keys' | 'run_cancels' | 'tool_calls' | 'sessions' | 'oauth_grants';
/** Subscribed under this id, a wake is called for every notification on its channel, with its payload. */
export const ANY_ID = '*';
/** After a lost connection, how long before listening again. */
const RECONNECT_AFTER_MS = 1_000;

export interface NotificationHub {
  /**
   * Calls `wake` whenever `id` (or, with ANY_ID, anything) is notified on `channel`, with the
   * notification's payload, and whenever the listening connection is lost or (re)established,
   * without one, since notifications sent meanwhile are gone. Opens the connection if it is not.
   * Returns the unsubscribe.
   */
  subscribe(channel: Channel, id: string, wake: (payload?: string) => void): () => void;
  /** Whether a change committed now would be noticed: the connection is listening. */
  listening(): boolean;
  close(): Promise<void>;
}

/**
 * One LISTEN connection per process, opened with the first subscription, fanned out in process by
 * channel and id: a thousand streams of a gateway cost one PostgreSQL connection, not a thousand.
 * It listens on the `channels` its process reads only (every notification goes to every connection
 * listening on its channel). A notification only says "look": whoever is woken reads the tables,
 * so a lost or doubled notification cannot lose or repeat anything.
 */
export function createNotificationHub(options: {
  url: string;
  logger: Logger;
  channels: readonly Channel[];
}): NotificationHub {
  const subscribers = new Map<string, Set<(payload?: string) => void>>();
  const keyOf = (channel: string, id: string) => `${channel}\n${id}`;
  let client: Client | undefined;
  let connecting: Promise<void> | undefined;
  let retry: NodeJS.Timeout | undefined;
  let closed = false;

  const wake = (key: string, payload: string) => {
    for (const fn of subscribers.get(key) ?? []) fn(payload);
  };
  const wakeAll = () => {
    for (const set of subscribers.values()) for (const fn of set) fn();
  };

  const connect = (): Promise<void> => {
    connecting ??= (async () => {
      const next = new Client({ connectionString: options.url });
      next.on('notification', (msg) => {
        const payload = msg.payload ?? '';
        wake(keyOf(msg.channel, payload), payload);
        wake(keyOf(msg.channel, ANY_ID), payload);
      });
      next.on('error', (err) => {
        options.logger.warn({ err }, 'notification listener lost its connection');
        lost(next);
      });
      next.on('end', () => lost(next));
      try {
        await next.connect();
        for (const channel of options.channels) await next.query(`LISTEN ${channel}`);
        client = next;
        // Whatever was notified before this connection listened is read now.
        wakeAll();
      } catch (err) {
        options.logger.warn({ err }, 'notification listener could not connect');
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
    subscribe(channel, id, fn) {
      if (!options.channels.includes(channel)) throw new Error(`not listening on ${channel}`);
      const key = keyOf(channel, id);
      const set = subscribers.get(key) ?? new Set();
      set.add(fn);
      subscribers.set(key, set);
      if (!client && !closed) void connect();
      return () => {
        set.delete(fn);
        if (!set.size && subscribers.get(key) === set) subscribers.delete(key);
      };
    },
    listening: () => client !== undefined,
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
