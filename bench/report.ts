/** The rows of the bench's table: what each measures, the service's figure, its baseline's, and the verdict. */
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

const errorsOf = (f: Figures) => (f.errors ? `, ${f.errors} errors` : '');

/**
 * Latency at p50 and p99; meets when both ratios are within their bounds and nothing failed.
 * `details` join the row's recorded data.
 */
export function latencyRow(
  key: RowKey,
  name: string,
  service: Figures,
  baseline: Figures,
  bound: { p50: number; p99?: number },
  details: Record<string, unknown> = {},
): Row {
  const r50 = service.p50 / baseline.p50;
  const r99 = service.p99 / baseline.p99;
  return {
    key,
    name,
    measure: `p50 (p99) ms, n=${service.n}`,
    service: `${fmt(service.p50, 2)} (${fmt(service.p99, 2)})${errorsOf(service)}`,
    baseline: `${fmt(baseline.p50, 2)} (${fmt(baseline.p99, 2)})${errorsOf(baseline)}`,
    ratio: `${fmt(r50, 2)}x (${fmt(r99, 2)}x)`,
    target: bound.p99 === undefined ? `p50 ≤${bound.p50}x` : `p50 ≤${bound.p50}x, p99 ≤${bound.p99}x`,
    meets: r50 <= bound.p50 && (bound.p99 === undefined || r99 <= bound.p99) && !service.errors,
    data: { service, baseline, ratioP50: r50, ratioP99: r99, ...details },
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
