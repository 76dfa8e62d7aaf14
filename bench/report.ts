/**
 * The rows of the bench's table: what each measures, the service's figure, its baseline's, and the
 * verdict. Every row is measured in several rounds (BENCH_ROUNDS) and shows their median and spread.
 */
import { access } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Figures } from './measure';
import type { RowKey } from './selection';

export interface Row {
  /** the selectable row it belongs to (see selection.ts) */
  key: RowKey;
  name: string;
  /** what the service and baseline columns hold, with their unit */
  measure: string;
  service: string;
  baseline: string;
  /** service ÷ baseline, or the difference the target is stated in */
  ratio: string;
  target: string;
  /** undefined: no target, the row informs */
  meets?: boolean;
  /** the raw figures, for the results file */
  data?: unknown;
}

export const fmt = (x: number | undefined, digits = 1): string =>
  x === undefined || Number.isNaN(x) || !Number.isFinite(x) ? '-' : x.toFixed(digits);

/** The middle value (the mean of the two middle ones for an even count); NaN for none. */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  if (!sorted.length) return NaN;
  return sorted.length % 2
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** A figure measured in several rounds: its median, and the least and greatest of the rounds. */
export interface Spread {
  median: number;
  min: number;
  max: number;
  rounds: number[];
}

export function spreadOf(rounds: readonly number[]): Spread {
  return { median: median(rounds), min: Math.min(...rounds), max: Math.max(...rounds), rounds: [...rounds] };
}

/** `1.06x (0.98–1.12)`: the median, then the spread of the rounds. */
export function withSpread(s: Spread, digits = 2, unit = 'x'): string {
  return `${fmt(s.median, digits)}${unit} (${fmt(s.min, digits)}–${fmt(s.max, digits)})`;
}

/** One round of a paired latency measurement. */
export interface LatencyRound {
  service: Figures;
  baseline: Figures;
}

/**
 * Latency at p50 and p99 over several rounds: each side's column is the median of its rounds'
 * figures, the ratio the median of the rounds' ratios with their spread. Meets when the median
 * ratios are within their bounds and nothing failed in any round. `details` join the row's data.
 */
export function latencyRow(
  key: RowKey,
  name: string,
  rounds: readonly LatencyRound[],
  bound: { p50: number; p99?: number },
  details: Record<string, unknown> = {},
): Row {
  const r50 = spreadOf(rounds.map((r) => r.service.p50 / r.baseline.p50));
  const r99 = spreadOf(rounds.map((r) => r.service.p99 / r.baseline.p99));
  const side = (of: (r: LatencyRound) => Figures) => {
    const errors = rounds.reduce((n, r) => n + of(r).errors, 0);
    return (
      `${fmt(median(rounds.map((r) => of(r).p50)), 2)} (${fmt(median(rounds.map((r) => of(r).p99)), 2)})` +
      (errors ? `, ${errors} errors` : '')
    );
  };
  const serviceErrors = rounds.reduce((n, r) => n + r.service.errors, 0);
  return {
    key,
    name,
    measure: `p50 (p99) ms, n=${rounds[0]?.service.n ?? 0} ×${rounds.length}`,
    service: side((r) => r.service),
    baseline: side((r) => r.baseline),
    ratio: `${withSpread(r50)}; p99 ${withSpread(r99)}`,
    target: bound.p99 === undefined ? `p50 ≤${bound.p50}x` : `p50 ≤${bound.p50}x, p99 ≤${bound.p99}x`,
    meets: r50.median <= bound.p50 && (bound.p99 === undefined || r99.median <= bound.p99) && !serviceErrors,
    data: { rounds, ratioP50: r50, ratioP99: r99, ...details },
  };
}

/** A row whose measurement failed: the table says so, and why, and the run goes on. */
export function failedRow(key: RowKey, err: unknown): Row {
  const message = String((err as Error)?.message ?? err).split('\n')[0] ?? '';
  return {
    key,
    name: key,
    measure: '-',
    service: `failed: ${message.slice(0, 120)}`,
    baseline: '-',
    ratio: '-',
    target: '-',
    meets: false,
    data: { error: String((err as Error)?.stack ?? err) },
  };
}

export function printTable(rows: Row[]): string {
  const head = ['row', 'measure', 'service', 'baseline', 'ratio', 'target', 'meets'];
  const body = rows.map((r) => [
    r.name,
    r.measure,
    r.service,
    r.baseline,
    r.ratio,
    r.target,
    r.meets === undefined ? '-' : r.meets ? 'yes' : 'NO',
  ]);
  const all = [head, ...body];
  const width = head.map((_, c) => Math.max(...all.map((row) => (row[c] ?? '').length)));
  const line = (row: string[]) => '| ' + row.map((c, i) => c.padEnd(width[i] ?? 0)).join(' | ') + ' |';
  const sep = '|' + width.map((w) => '-'.repeat(w + 2)).join('|') + '|';
  return [line(head), sep, ...body.map(line)].join('\n');
}

/** A small markdown table of its own, for the figures behind a row (memory, CPU by process). */
export function markdownTable(head: string[], body: string[][]): string {
  return [
    `| ${head.join(' | ')} |`,
    `|${head.map(() => '---').join('|')}|`,
    ...body.map((r) => `| ${r.join(' | ')} |`),
  ].join('\n');
}

/** `<name>.json`, or `<name>-2.json`, `-3`… when a run of the same day and rows wrote it already. */
export async function freshFile(dir: string, name: string): Promise<string> {
  for (let n = 1; ; n++) {
    const file = n === 1 ? `${name}.json` : `${name}-${n}.json`;
    try {
      await access(path.join(dir, file));
    } catch {
      return file;
    }
  }
}

/** The machine a results file was measured on, with its load average at the start and now. */
export function machineOf(loadAverageAtStart: string[]) {
  return {
    cores: os.cpus().length,
    cpu: os.cpus()[0]?.model,
    memoryBytes: os.totalmem(),
    node: process.version,
    platform: `${os.platform()} ${os.release()}`,
    loadAverageAtStart,
    loadAverageAtEnd: os.loadavg().map((l) => l.toFixed(1)),
  };
}
