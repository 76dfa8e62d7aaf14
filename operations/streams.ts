import type { Channel, NotificationHub } from '../core/db/notification-hub';
import { AppError, UnauthorizedError } from '../core/errors/app-error';
import type { Gauge } from 'prom-client';
import { mcpWaitsOpen } from '../core/metrics/registry';
import { apiKeyIsLive, sessionRemainingMs } from '../core/identity/store';
import { grantIsLive } from '../core/oauth/store';
import { openFileLimit, streamCapacity } from '../core/process/open-files';
import { extendStreamSlots, releaseStreamSlot, takeStreamSlot } from '../core/streams/store';
import type { Caller, OperationDeps } from './deps';
import { activeLimit } from './limits';

/**
 * How long a slot stays taken without its gateway extending it: the places a gateway held when it
 * died are free again within this.
 */
const SLOT_TTL_SECONDS = 60;
/** How often a gateway extends the slots it holds, all in one statement: well within their TTL. */
const SLOT_EXTEND_MS = 20_000;
/** When a client refused for the gateway's capacity may try again (another gateway may take it). */
const GATEWAY_FULL_RETRY_AFTER_SECONDS = 5;
/** Node's longest timer; a session's expiry further out is checked again when it fires. */
const LONGEST_TIMER_MS = 2 ** 31 - 1;

/**
 * What a stream or a wait was opened with (an API key, a console session, an OAuth grant), which
 * it must not outlive: the channel its end is notified on and its id there, and whether it works
 * now, with for how much longer in ms (a session expires; a key and a grant do not).
 */
export interface StreamCredential {
  channel: Extract<Channel, 'api_keys' | 'sessions' | 'oauth_grants'>;
  id: string;
  check(): Promise<{ remainingMs?: number } | undefined>;
}

/** What the caller's stream or wait must not outlive: its API key, console session or OAuth grant. */
export function credentialOf(deps: OperationDeps, caller: Caller): StreamCredential | undefined {
  const { apiKeyId, sessionId, oauthGrantId } = caller;
  if (apiKeyId)
    return {
      channel: 'api_keys',
      id: apiKeyId,
      check: async () => ((await apiKeyIsLive(deps.db, apiKeyId)) ? {} : undefined),
    };
  if (oauthGrantId)
    return {
      channel: 'oauth_grants',
      id: oauthGrantId,
      check: async () => ((await grantIsLive(deps.db.pool, oauthGrantId)) ? {} : undefined),
    };
  if (sessionId)
    return {
      channel: 'sessions',
      id: sessionId,
      check: async () => {
        const remainingMs = await sessionRemainingMs(deps.db, sessionId);
        return remainingMs === undefined ? undefined : { remainingMs };
      },
    };
  return undefined;
}

/** A stream or wait while it is open: one of the user's MAX_OPEN_STREAMS_PER_USER places. */
export interface OpenWait {
  /** Aborts when the client goes away or the credential ends, whichever comes first. */
  signal: AbortSignal;
  /** Whether it was the credential's end (revoked, signed out, expired) that aborted `signal`. */
  credentialEnded(): boolean;
  /** Gives the place back and stops watching the credential; once is enough, more is harmless. */
  close(): void;
}

/**
 * The user's open streams and waits (a run's live stream, wait_for_run, resources/subscribe): each
 * holds a place, at most MAX_OPEN_STREAMS_PER_USER over every gateway (429 ACTIVE_LIMIT past it),
 * and ends when the credential it was opened with does, as that credential's next request would
 * be refused: a stream of a run waiting on its plan, or an assistant's waits, could otherwise go
 * on for a day on a key, session or grant its owner took back.
 */
export function createStreams(deps: OperationDeps, hub: NotificationHub) {
  const held = new Set<string>();
  // Each open stream or wait holds a socket: past the open-file limit, the next connection of any
  // kind would fail to be accepted (EMFILE), so streams are refused first, with a clear 503.
  const openFiles = openFileLimit();
  const capacity =
    deps.config.MAX_OPEN_STREAMS_PER_GATEWAY ?? (openFiles ? streamCapacity(openFiles.soft) : undefined);
  deps.logger.info(
    { openFilesSoft: openFiles?.soft, openFilesHard: openFiles?.hard, maxOpenStreams: capacity },
    'open-file limit and the open streams and waits this gateway holds at most',
  );
  /** Opened or opening here: counted before the slot is taken, so a burst cannot pass the capacity. */
  let openHere = 0;
  let extender: NodeJS.Timeout | undefined;
  const extend = () =>
    void extendStreamSlots(deps.db.pool, [...held], SLOT_TTL_SECONDS).catch((err: unknown) =>
      deps.logger.warn({ err }, 'open streams not extended; they are extended again at the next interval'),
    );

  /**
   * Watches the credential: at once when its end may have been notified (or the listening
   * connection changed, so an end may have gone unheard); otherwise once, one heartbeat interval
   * after the open, for an end between the request's check and the subscription (unheard). Not at
   * once: a burst of streams opening would each cost a query. A session's expiry, which nothing
   * announces, is learned at a check and ends the wait on time.
   */
  function watch(credential: StreamCredential, end: () => void): () => void {
    let timer: NodeJS.Timeout | undefined;
    let stopped = false;
    let checking: Promise<void> | undefined;
    let again = false;
    const later = (ms: number) => {
      clearTimeout(timer);
      timer = setTimeout(check, Math.min(Math.max(ms, 0), LONGEST_TIMER_MS));
    };
    function check(): void {
      if (checking) return void (again = true);
      checking = (async () => {
        try {
          const live = await credential.check();
          if (stopped) return;
          if (!live) return end();
          if (live.remainingMs !== undefined) later(live.remainingMs);
        } catch (err) {
          deps.logger.warn({ err }, 'a credential check failed; checked again at the next heartbeat');
          if (!stopped) later(deps.config.STREAM_HEARTBEAT_INTERVAL);
        } finally {
          checking = undefined;
          if (again && !stopped) {
            again = false;
            check();
          }
        }
      })();
    }
    later(deps.config.STREAM_HEARTBEAT_INTERVAL);
    const unsubscribe = hub.subscribe(credential.channel, credential.id, check);
    return () => {
      stopped = true;
      clearTimeout(timer);
      unsubscribe();
    };
  }

  return {
    /**
     * Takes one of the caller's places (429 ACTIVE_LIMIT when none is left) and watches the
     * caller's credential; the wait's `signal` aborts with `signal` or at the credential's end.
     */
    async open(caller: Caller, signal: AbortSignal): Promise<OpenWait> {
      if (capacity !== undefined && openHere >= capacity) throw gatewayFull(capacity);
      openHere++;
      const max = deps.config.MAX_OPEN_STREAMS_PER_USER;
      const slot = await takeStreamSlot(deps.db.pool, {
        userId: caller.userId,
        ttlSeconds: SLOT_TTL_SECONDS,
        max,
      }).catch((err: unknown) => {
        openHere--;
        throw err;
      });
      if (!slot) {
        openHere--;
        throw activeLimit('MAX_OPEN_STREAMS_PER_USER', max, 'open streams and waits');
      }
      held.add(slot);
      extender ??= setInterval(extend, SLOT_EXTEND_MS).unref();
      // One controller the client's going and the credential's end both abort: AbortSignal.any
      // would keep a signal of its own, with weak references to both, for each stream.
      const ended = new AbortController();
      let credentialEnded = false;
      const credential = credentialOf(deps, caller);
      const stopWatching = credential
        ? watch(credential, () => {
            credentialEnded = !ended.signal.aborted;
            ended.abort();
          })
        : () => undefined;
      const clientGone = () => ended.abort();
      let closed = false;
      const close = () => {
        if (closed) return;
        closed = true;
        openHere--;
        signal.removeEventListener('abort', clientGone);
        stopWatching();
        held.delete(slot);
        if (held.size === 0) {
          clearInterval(extender);
          extender = undefined;
        }
        void releaseStreamSlot(deps.db.pool, slot).catch((err: unknown) =>
          deps.logger.warn({ err }, 'an open stream was not given back; it expires on its own'),
        );
      };
      // Whatever becomes of its reader, a wait whose client went away holds nothing.
      ended.signal.addEventListener('abort', close, { once: true });
      if (signal.aborted) ended.abort();
      else signal.addEventListener('abort', clientGone, { once: true });
      return { signal: ended.signal, credentialEnded: () => credentialEnded, close };
    },
  };
}

export type Streams = ReturnType<typeof createStreams>;

function gatewayFull(capacity: number): AppError {
  return new AppError(
    'SERVICE_UNAVAILABLE',
    `This gateway holds as many open streams and waits as it can (${capacity}); retry shortly, another gateway may take it.`,
    [
      {
        path: 'MAX_OPEN_STREAMS_PER_GATEWAY',
        message: `at most ${capacity} open streams and waits per gateway`,
      },
    ],
    { 'retry-after': String(GATEWAY_FULL_RETRY_AFTER_SECONDS) },
  );
}

/**
 * What `follow` yields while it holds one of the caller's places (see Streams.open), counted in
 * agent_mcp_waits_open (MCP's waits are its callers): its signal
 * aborts with `signal` or at the credential's end, which is then a 401 for the caller, who is
 * told why their wait stopped short.
 */
export async function* heldOpen<T>(
  streams: Streams,
  caller: Caller,
  signal: AbortSignal,
  follow: (signal: AbortSignal) => AsyncGenerator<T>,
): AsyncGenerator<T> {
  const wait = await streams.open(caller, signal);
  mcpWaitsOpen.inc();
  try {
    yield* follow(wait.signal);
    if (wait.credentialEnded())
      throw new UnauthorizedError('The credential this wait was opened with was revoked or has expired.');
  } finally {
    mcpWaitsOpen.dec();
    wait.close();
  }
}

/** The stream, counted in `gauge` while it is read. */
export async function* counted<T>(gauge: Gauge, stream: AsyncGenerator<T>): AsyncGenerator<T> {
  gauge.inc();
  try {
    yield* stream;
  } finally {
    gauge.dec();
  }
}
