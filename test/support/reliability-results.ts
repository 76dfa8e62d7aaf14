/**
 * The table the reliability suites (chaos, cancel races, lifecycle kills) end with, one row per
 * scenario and moment: how many runs the scenario drove, how many faults were aimed at the moment,
 * how many struck with it in flight, and what was lost or doubled. It is printed, and written with
 * the run's settings and commit to test/results/<suite>-<engine>-<time>.json, the file
 * docs/reliability.md quotes its tables from.
 */
import { execFile } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';

export interface MomentRow {
  scenario: string;
  moment: string;
  runs: number;
  /** Faults aimed at this moment (0 for a moment a fault aimed elsewhere happened to strike). */
  aimed: number;
  /** Faults that struck while this moment was in flight. */
  hits: number;
  lost: number;
  doubled: number;
}

const RESULTS_DIR = path.resolve(__dirname, '../results');

/** A markdown table, indented as mocha's output is. */
export function markdownTable(head: string[], rows: (string | number)[][]): string {
  return [
    '',
    `      | ${head.join(' | ')} |`,
    `      |${head.map(() => '---').join('|')}|`,
    ...rows.map((r) => `      | ${r.join(' | ')} |`),
  ].join('\n');
}

export function momentTable(rows: MomentRow[]): string {
  return markdownTable(
    ['scenario', 'moment', 'runs', 'faults aimed', 'hits', 'lost', 'doubled'],
    rows.map((r) => [r.scenario, r.moment, r.runs, r.aimed, r.hits, r.lost, r.doubled]),
  );
}

/**
 * Writes the run's results; answers the file's path. `settings` are the environment variables
 * that reproduce the run (its seed among them).
 */
export async function writeResults(
  suite: string,
  engine: string,
  settings: Record<string, string | number>,
  results: { moments: MomentRow[] } & Record<string, unknown>,
): Promise<string> {
  const commit = await promisify(execFile)('git', ['rev-parse', 'HEAD'], { cwd: RESULTS_DIR + '/..' }).then(
    (r) => r.stdout.trim(),
    () => undefined,
  );
  const at = new Date();
  await mkdir(RESULTS_DIR, { recursive: true });
  const file = path.join(RESULTS_DIR, `${suite}-${engine}-${at.toISOString().replace(/[:.]/g, '-')}.json`);
  await writeFile(
    file,
    `${JSON.stringify({ suite, engine, at: at.toISOString(), commit, settings, ...results }, null, 2)}\n`,
  );
  return file;
}
