import type { NotificationHub } from '../../core/db/notification-hub';
import type { RunScope } from '../../core/runs/store';

/**
 * How long an answer stands without a notification: what a snapshot shows that no notification
 * announces (a model step's number at its start, webhook deliveries' progress, a chat deleted
 * through another gateway) reaches a poller within this.
 */
const REMEMBER_MS = 1_000;

/**
 * The most runs remembered at once. An answer is a whole snapshot, so what is kept is bounded:
 * a changed run's answer is let go at its notification, answers past their second are swept out
 * once a second, and a read that finds this many still standing is answered without being
 * remembered.
 */
const MAX_REMEMBERED = 10_000;

interface Remembered {
  userId: string;
  chatId: string;
  /** The answer read, with its ETag; empty until the read is done. */
  answer: { etag: string } | undefined;
  until: number;
  /** Set by a notification for the run, or by the listening connection changing. */
  changed: boolean;
  stop(): void;
}

/**
 * What this gateway last answered for each polled run, kept only while the database says (by the
 * run_events notifications) that nothing changed: a client polling a run every few milliseconds is
 * answered from memory (304 when it sends the ETag back, else the same answer in full), and only a
 * change, or the second passing, costs a read. Changes the live stream announces (text, status,
 * tool calls, waitpoints) end an answer at once; the rest shows up within REMEMBER_MS. Per process;
 * nothing is shared, so any gateway may serve any poll.
 */
export function createPollMemory(hub: NotificationHub, maxRemembered = MAX_REMEMBERED) {
  const runs = new Map<string, Remembered>();
  let sweptAt = 0;

  const drop = (runId: string, entry: Remembered) => {
    entry.stop();
    if (runs.get(runId) === entry) runs.delete(runId);
  };

  const sweep = (now: number) => {
    for (const [runId, entry] of runs) if (entry.changed || entry.until <= now) drop(runId, entry);
  };

  /** The caller's remembered answer for the run, while it still stands; else undefined. */
  const standing = (scope: RunScope): { etag: string } | undefined => {
    const entry = runs.get(scope.runId);
    if (!entry) return undefined;
    if (entry.changed || entry.until <= Date.now() || !hub.listening()) {
      drop(scope.runId, entry);
      return undefined;
    }
    return entry.userId === scope.userId && entry.chatId === scope.chatId ? entry.answer : undefined;
  };

  return {
    /**
     * The caller's remembered answer for the run while it stands; else reads it with `load` and
     * remembers it. The run is watched from before the read, so a change committed after the read
     * began keeps nothing; so does a read begun while the hub is not listening. Every caller
     * answered from memory is handed the same object: it is to be sent, not changed.
     */
    async read<T extends { etag: string }>(scope: RunScope, load: () => Promise<T>): Promise<T> {
      const known = standing(scope);
      if (known) return known as T;
      const entry: Remembered = {
        userId: scope.userId,
        chatId: scope.chatId,
        answer: undefined,
        until: 0,
        changed: !hub.listening(),
        stop: () => undefined,
      };
      entry.stop = hub.subscribe('run_events', scope.runId, () => {
        entry.changed = true;
        // Let go at once: a changed answer is never given again, and its place is free.
        if (runs.get(scope.runId) === entry) drop(scope.runId, entry);
      });
      let answer: T;
      try {
        answer = await load();
      } catch (err) {
        entry.stop();
        throw err;
      }
      if (entry.changed) {
        entry.stop();
        return answer;
      }
      const now = Date.now();
      if (now - sweptAt >= REMEMBER_MS) {
        sweep(now);
        sweptAt = now;
      }
      const before = runs.get(scope.runId);
      if (before) drop(scope.runId, before);
      if (runs.size >= maxRemembered) {
        entry.stop();
        return answer;
      }
      entry.answer = answer;
      entry.until = now + REMEMBER_MS;
      runs.set(scope.runId, entry);
      return answer;
    },

    /**
     * Forgets a run this process just changed, or every run of a chat it deleted, so its own
     * caller's next poll reads what it did (other gateways learn it from the notification).
     */
    forget(which: { runId: string } | { chatId: string }): void {
      if ('runId' in which) {
        const entry = runs.get(which.runId);
        if (entry) drop(which.runId, entry);
        return;
      }
      for (const [runId, entry] of runs) if (entry.chatId === which.chatId) drop(runId, entry);
    },

    /** The ETag of the caller's last answer for this run, while it still stands; else undefined. */
    unchanged(scope: RunScope): string | undefined {
      return standing(scope)?.etag;
    },
  };
}
