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

function quantile(sorted: number[], q: number): number {
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

/** Runs `op` n times with `concurrency` in flight; latency per op in ms. */
export async function measure(
  op: (i: number) => Promise<unknown>,
  n: number,
  concurrency = 1,
): Promise<Figures> {
  const rec = recorder();
  let next = 0;
  const t0 = performance.now();
  const lane = async () => {
    for (let i = next++; i < n; i = next++) await rec.time(() => op(i));
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
  return rec.figures(performance.now() - t0, concurrency);
}

/** Runs `op` back to back in each of `lanes` lanes (told its lane) until `seconds` have passed. */
export async function measureFor(
  seconds: number,
  lanes: number,
  op: (lane: number) => Promise<unknown>,
): Promise<Figures> {
  const rec = recorder();
  const t0 = performance.now();
  const until = t0 + seconds * 1000;
  await Promise.all(
    Array.from({ length: lanes }, async (_, lane) => {
      while (performance.now() < until) await rec.time(() => op(lane));
    }),
  );
  return rec.figures(performance.now() - t0, lanes);
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

export interface Row {
  name: string;
  target: string;
  service?: Figures;
  baseline?: Figures;
  /** service / baseline at p50 and p99; for crop, the p50 difference in ms */
  ratioP50?: number;
  ratioP99?: number;
  diffP50Ms?: number;
  meets?: boolean;
  note?: string;
}

const f = (x: number | undefined, d = 1) => (x === undefined || Number.isNaN(x) ? '-' : x.toFixed(d));

export function printTable(rows: Row[]): string {
  const head = [
    'row',
    'svc p50 ms',
    'svc p99 ms',
    'svc ops/s',
    'base p50 ms',
    'base p99 ms',
    'base ops/s',
    'ratio p50',
    'ratio p99',
    'target',
    'meets',
  ];
  const body = rows.map((r) =>
    r.service
      ? [
          r.name,
          f(r.service.p50, 2),
          f(r.service.p99, 2),
          f(r.service.throughput),
          f(r.baseline?.p50, 2),
          f(r.baseline?.p99, 2),
          f(r.baseline?.throughput),
          r.diffP50Ms !== undefined ? `Δ${f(r.diffP50Ms)}ms` : `${f(r.ratioP50, 2)}x`,
          r.diffP50Ms !== undefined ? '-' : `${f(r.ratioP99, 2)}x`,
          r.target,
          r.meets === undefined ? '-' : r.meets ? 'yes' : 'NO',
        ]
      : [
          r.name,
          r.note ?? 'not measured',
          '',
          '',
          '',
          '',
          '',
          '',
          '',
          r.target,
          r.meets === undefined ? '-' : r.meets ? 'yes' : 'NO',
        ],
  );
  const all = [head, ...body];
  const w = head.map((_, c) => Math.max(...all.map((row) => String(row[c]).length)));
  const line = (row: string[]) =>
    '| ' + row.map((c, i) => String(c).padEnd(w[i] as number)).join(' | ') + ' |';
  const sep = '|' + w.map((x) => '-'.repeat(x + 2)).join('|') + '|';
  return [line(head), sep, ...body.map(line)].join('\n');
}
