/**
 * The database's side of a turn: every statement PostgreSQL ran over the sustained window, from
 * pg_stat_statements, per completed turn (the turn's own statements and those of its polls).
 */
import type { Pool } from 'pg';
import { fmt, markdownTable } from './report';

export interface Statement {
  query: string;
  calls: number;
  /** ms PostgreSQL spent executing it, over all calls */
  execMs: number;
}

export interface StatementWindow {
  /** Forgets what was counted, as the window opens. */
  reset(): Promise<void>;
  /** The statements of this database since the reset, most called first. */
  read(): Promise<Statement[]>;
}

/**
 * The window over pg_stat_statements, or undefined when the server has not loaded it (an external
 * PostgreSQL started without it): the bench then goes without the table.
 */
export async function statementWindow(pool: Pool): Promise<StatementWindow | undefined> {
  try {
    await pool.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    await pool.query('SELECT 1 FROM pg_stat_statements LIMIT 1');
  } catch (err) {
    console.log(`bench: no statement counts (${(err as Error).message})`);
    return undefined;
  }
  return {
    async reset() {
      await pool.query('SELECT pg_stat_statements_reset()');
    },
    async read() {
      const { rows } = await pool.query<{ query: string; calls: string; exec_ms: number }>(
        `SELECT query, calls, total_exec_time AS exec_ms FROM pg_stat_statements
          WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
            AND query NOT LIKE '%pg_stat_statements%'
          ORDER BY calls DESC`,
      );
      return rows.map((r) => ({ query: r.query, calls: Number(r.calls), execMs: r.exec_ms }));
    },
  };
}

/** A statement as the table names it: its first words, on one line. */
function shortly(query: string): string {
  const line = query.replace(/\s+/g, ' ').trim();
  return (line.length > 90 ? `${line.slice(0, 87)}…` : line).replaceAll('|', '\\|');
}

/** The statements per turn, the most called first; the rest summed on one line. */
export function statementsTable(statements: Statement[], turns: number, shown = 12) {
  const per = (n: number) => fmt(n / turns, 2);
  const row = (name: string, of: Statement[]) => [
    name,
    per(of.reduce((n, s) => n + s.calls, 0)),
    per(of.reduce((n, s) => n + s.execMs, 0)),
  ];
  const rest = statements.slice(shown);
  const body = statements.slice(0, shown).map((s) => row(shortly(s.query), [s]));
  if (rest.length) body.push(row(`${rest.length} other statements`, rest));
  body.push(row('all', statements));
  return {
    title: `PostgreSQL statements per completed turn over the sustained window (pg_stat_statements; ${turns} turns, polls included)`,
    markdown: markdownTable(['statement', 'calls per turn', 'execution ms per turn'], body),
  };
}
