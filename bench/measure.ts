import { performance } from 'node:perf_hooks';

export interface Figures {
  n: number;
  concurrency: number;
  p50: number;
  p99: number;
  /** operations per second over the whole batch (or the window) */
  throughput: number;
  errors: number;
}

export function quantile(sorted: number[], q: number): number {
  if (!sorted.length) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[i] as number;
}

/** Latencies in ms, failures counted apart, summed up by figures(). */
export function recorder() {
  const lat: number[] = [];
  let errors = 0;
  let firstError: unknown;
  return {
    add(ms: number): void {
      lat.push(ms);
    },
    fail(err: unknown): void {
      errors++;
      firstError ??= err;
    },
    async time(op: () => Promise<unknown>): Promise<void> {
      const s = performance.now();
      try {
        await op();
        lat.push(performance.now() - s);
      } catch (err) {
        errors++;
        firstError ??= err;
      }
    },
    figures(wallMs: number, concurrency: number): Figures {
      if (errors)
        console.error(`  ${errors} errors, first: ${String((firstError as Error)?.message ?? firstError)}`);
      const sorted = [...lat].sort((a, b) => a - b);
      return {
        n: lat.length + errors,
        concurrency,
        p50: quantile(sorted, 0.5),
        p99: quantile(sorted, 0.99),
        throughput: lat.length / (wallMs / 1000),
        errors,
      };
    },
  };
}

/** Runs `op` n times with `concurrency` in flight into `rec`; answers the wall time in ms. */
async function runLanes(
  op: (i: number) => Promise<unknown>,
  n: number,
  concurrency: number,
  rec: ReturnType<typeof recorder>,
): Promise<number> {
  let next = 0;
  const t0 = performance.now();
  const lane = async () => {
    for (let i = next++; i < n; i = next++) await rec.time(() => op(i));
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
  return performance.now() - t0;
}

/** Runs `op` n times with `concurrency` in flight; latency per op in ms. */
export async function measure(
  op: (i: number) => Promise<unknown>,
  n: number,
  concurrency = 1,
): Promise<Figures> {
  const rec = recorder();
  return rec.figures(await runLanes(op, n, concurrency, rec), concurrency);
}

/**
 * Each of `ops`, n times, in alternating slices (in the given order, then reversed, and so on),
 * their latencies pooled per side. Whatever drifts over the run (a JIT still warming, a server
 * filling with open workflows, a neighbour's burst) weighs on every side alike instead of on
 * whichever ran last. Above one in flight, each side first runs twice the concurrency uncounted:
 * its connection pools grow to what the concurrency needs (a PostgreSQL connection opening takes
 * tens of ms), which would otherwise land in the first side's tail alone.
 */
export async function measureSides(
  ops: readonly ((i: number) => Promise<unknown>)[],
  n: number,
  concurrency = 1,
  slices = 4,
): Promise<Figures[]> {
  const sides = ops.map((op) => ({ op, rec: recorder(), wallMs: 0 }));
  if (concurrency > 1)
    for (const one of sides) await runLanes(one.op, concurrency * 2, concurrency, recorder());
  const per = Math.ceil(n / slices);
  for (let slice = 0; slice < slices; slice++) {
    for (const one of slice % 2 === 0 ? sides : [...sides].reverse())
      one.wallMs += await runLanes(one.op, per, concurrency, one.rec);
  }
  return sides.map((one) => one.rec.figures(one.wallMs, concurrency));
}

/** `service` and `baseline` in alternating slices (measureSides). */
export async function measurePair(
  service: (i: number) => Promise<unknown>,
  baseline: (i: number) => Promise<unknown>,
  n: number,
  concurrency = 1,
): Promise<{ service: Figures; baseline: Figures }> {
  const [s, b] = (await measureSides([service, baseline], n, concurrency)) as [Figures, Figures];
  return { service: s, baseline: b };
}

/** The same measurement `times` times, one after the other: each row's figure is their median. */
export async function repeat<T>(times: number, measureOnce: (round: number) => Promise<T>): Promise<T[]> {
  const out: T[] = [];
  for (let round = 0; round < times; round++) out.push(await measureOnce(round));
  return out;
}

export interface ClosedLoop {
  /** Opens the measured window: operations that end from now on count. */
  mark(): void;
  /** Closes the window, lets the operations in flight end uncounted, and sums up the window. */
  stop(): Promise<Figures>;
  /** Whether a moment (performance.now()) lies in the window, for samples an operation takes itself. */
  inWindow(at: number): boolean;
}

/**
 * `lanes` clients, each running `op` back to back until stopped: a steady load at a fixed
 * concurrency. Only operations that end between mark() and stop() count, so neither the ramp-up
 * nor the drain (when fewer than `lanes` are in flight) weighs on the figures.
 */
export function closedLoop(lanes: number, op: (lane: number) => Promise<unknown>): ClosedLoop {
  const rec = recorder();
  let markedAt = Infinity;
  let stoppedAt = Infinity;
  const inWindow = (at: number) => at >= markedAt && at <= stoppedAt;
  const running = Promise.all(
    Array.from({ length: lanes }, async (_, lane) => {
      while (stoppedAt === Infinity) {
        const s = performance.now();
        try {
          await op(lane);
          const end = performance.now();
          if (inWindow(end)) rec.add(end - s);
        } catch (err) {
          if (inWindow(performance.now())) rec.fail(err);
        }
      }
    }),
  );
  return {
    mark() {
      markedAt = performance.now();
    },
    async stop() {
      stoppedAt = performance.now();
      await running;
      return rec.figures(stoppedAt - markedAt, lanes);
    },
    inWindow,
  };
}
