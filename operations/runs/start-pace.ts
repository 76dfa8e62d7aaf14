import { sendStartWaits } from '../../core/metrics/registry';

/**
 * How long a send waits for its workflow to start before it answers without the start's id: a
 * start that comes within it puts `triggerRunId` in the answer; a busy Temporal does not hold the
 * acknowledgement of a turn that is already durable (the bench's `send` row weighs this wait
 * against none; bench/HISTORY.md lists the runs that chose it).
 */
const START_WAIT_MS = 10;
const MISSED = Symbol('start missed the wait');
/**
 * Outcomes older than this are forgotten: the pace is Temporal's now, not that of a burst that
 * ended a minute ago.
 */
const WINDOW_MS = 30_000;
/** The most outcomes weighed; past it, the oldest goes. */
const MAX_OUTCOMES = 20;
/** Fewer outcomes than this in the window say nothing yet, and the send waits. */
const MIN_EVIDENCE = 4;
/** The wait is worth it while at least this share of the recent starts answered within it. */
const MIN_HIT_SHARE = 0.25;

/**
 * Whether a send's wait for its workflow's start is worth making, on this gateway's evidence: every
 * send records whether its start answered within the wait (whether or not the send waited), and
 * the wait is made only while enough recent starts did. An idle Temporal answers most starts in
 * time, so the answer carries `triggerRunId`; under load none comes in time, and a send then
 * answers as soon as its turn is durable instead of waiting for an id that is unlikely to come.
 */
export function createStartPace(now: () => number = Date.now) {
  const outcomes: { at: number; hit: boolean }[] = [];
  const prune = (t: number) => {
    while (outcomes.length > MAX_OUTCOMES || (outcomes[0] && outcomes[0].at <= t - WINDOW_MS))
      outcomes.shift();
  };
  /** A start answered (`hit`) or not within the wait, counted from its send's admission. */
  const record = (hit: boolean): void => {
    const t = now();
    outcomes.push({ at: t, hit });
    prune(t);
  };
  const worthWaiting = (): boolean => {
    prune(now());
    if (outcomes.length < MIN_EVIDENCE) return true;
    return outcomes.filter((o) => o.hit).length >= MIN_HIT_SHARE * outcomes.length;
  };
  return {
    record,
    worthWaiting,
    /**
     * The start's Temporal run id when the wait is worth making and the start answers within it;
     * else null, at once or when the wait ends. The start is timed either way, so the pace notices
     * at once when Temporal is quick again.
     */
    async idInTime(starting: Promise<string | null>): Promise<string | null> {
      const inTime = Promise.race([
        starting,
        new Promise<typeof MISSED>((resolve) => setTimeout(() => resolve(MISSED), START_WAIT_MS).unref()),
      ]);
      void inTime.then((id) => record(id !== MISSED && id !== null));
      if (!worthWaiting()) {
        sendStartWaits.inc({ outcome: 'skipped' });
        return null;
      }
      const id = await inTime;
      sendStartWaits.inc({ outcome: id === MISSED ? 'timed_out' : id === null ? 'not_started' : 'started' });
      return id === MISSED ? null : id;
    },
  };
}
