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
  return {
    /** A start answered (`hit`) or not within the wait, counted from its send's admission. */
    record(hit: boolean): void {
      const t = now();
      outcomes.push({ at: t, hit });
      prune(t);
    },
    worthWaiting(): boolean {
      prune(now());
      if (outcomes.length < MIN_EVIDENCE) return true;
      return outcomes.filter((o) => o.hit).length >= MIN_HIT_SHARE * outcomes.length;
    },
  };
}

export type StartPace = ReturnType<typeof createStartPace>;
