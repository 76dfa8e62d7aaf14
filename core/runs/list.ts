import type { Pool } from 'pg';
import { decodeCursor } from '../schemas/common';
import type { RunListQuery } from '../schemas/runs';

/**
 * The runs lists' SQL (GET /api/v1/runs, GET /api/v1/chats/{chatId}/runs): newest first, the id
 * breaking ties, one page plus one row telling whether another follows. Every statement reads one
 * index in the lists' order and stops at the page's end, so a page costs the same for a user with
 * a million runs as for one with ten (migration runs_regenerate_fork):
 *
 * - a user's runs: ("userId", "createdAt" DESC, id DESC);
 * - of some statuses: ("userId", status, "createdAt" DESC, id DESC), one range per status, each
 *   read in order up to a page, merged;
 * - carrying metadata pairs: "RunMetadata" ("userId", key, value, "createdAt" DESC, "runId" DESC),
 *   the range of the first pair, the others and the status checked on each run it names;
 * - a chat's runs: ("chatId", "createdAt" DESC, id DESC), every filter checked on each run.
 *
 * A run of a deleted chat is not listed: a deleted chat disappears from every route.
 */

/** The columns toRunSummary reads, of a Run row aliased `r`. */
const SUMMARY_COLUMNS = `r.id, r."chatId", r."messageId", r."assistantMessageId", r.status::text AS status,
  r."planMode", r."triggerRunId", r.metadata, r.error, r."cancelRequestedAt", r."createdAt", r."startedAt",
  r."finishedAt", r."updatedAt"`;

export interface RunRow extends Record<string, unknown> {
  id: string;
  createdAt: Date;
}

/** A statement's conditions and their values, numbered as they are added. */
class Conditions {
  readonly values: unknown[] = [];
  readonly where: string[] = [];

  bind(value: unknown): string {
    return `$${this.values.push(value)}`;
  }

  /** The keyset position, time range and metadata of `query`, on the columns named. */
  addCommon(query: RunListQuery, at: string, id: string, metadata: Record<string, string>): void {
    if (query.cursor) {
      const after = decodeCursor(query.cursor);
      this.where.push(`(${at}, ${id}) < (${this.bind(after.at)}, ${this.bind(after.id)})`);
    }
    if (query.since) this.where.push(`${at} >= ${this.bind(query.since)}`);
    if (query.until) this.where.push(`${at} < ${this.bind(query.until)}`);
    if (Object.keys(metadata).length)
      this.where.push(`r.metadata @> ${this.bind(JSON.stringify(metadata))}::jsonb`);
  }
}

/** The caller's runs over all their chats, one page (plus one row), newest first. */
export async function selectUserRuns(pool: Pool, userId: string, query: RunListQuery): Promise<RunRow[]> {
  const c = new Conditions();
  const user = c.bind(userId);
  const limit = query.limit + 1;
  const [pair, ...others] = Object.entries(query.metadata ?? {});
  let text: string;
  if (pair) {
    // The range of the first pair, in order; the other pairs and the status checked on each run.
    c.where.push(`t."userId" = ${user}`, `t.key = ${c.bind(pair[0])}`, `t.value = ${c.bind(pair[1])}`);
    c.addCommon(query, 't."createdAt"', 't."runId"', Object.fromEntries(others));
    if (query.status) c.where.push(`r.status::text = ANY(${c.bind(query.status)}::text[])`);
    text = `SELECT ${SUMMARY_COLUMNS}
              FROM "RunMetadata" t
              JOIN "Run" r ON r.id = t."runId"
              JOIN "Chat" ch ON ch.id = r."chatId" AND ch."deletedAt" IS NULL
             WHERE ${c.where.join(' AND ')}
             ORDER BY t."createdAt" DESC, t."runId" DESC
             LIMIT ${c.bind(limit)}`;
  } else if (query.status) {
    // One ordered range per status, each cut at a page: the page is among them.
    c.where.push(`r."userId" = ${user}`, `r.status = s.status`);
    c.addCommon(query, 'r."createdAt"', 'r.id', {});
    const page = c.bind(limit);
    text = `SELECT p.* FROM unnest(${c.bind(query.status)}::"RunStatus"[]) AS s(status)
             CROSS JOIN LATERAL (
               SELECT ${SUMMARY_COLUMNS}
                 FROM "Run" r JOIN "Chat" ch ON ch.id = r."chatId" AND ch."deletedAt" IS NULL
                WHERE ${c.where.join(' AND ')}
                ORDER BY r."createdAt" DESC, r.id DESC
                LIMIT ${page}) p
             ORDER BY p."createdAt" DESC, p.id DESC
             LIMIT ${page}`;
  } else {
    c.where.push(`r."userId" = ${user}`);
    c.addCommon(query, 'r."createdAt"', 'r.id', {});
    text = `SELECT ${SUMMARY_COLUMNS}
              FROM "Run" r JOIN "Chat" ch ON ch.id = r."chatId" AND ch."deletedAt" IS NULL
             WHERE ${c.where.join(' AND ')}
             ORDER BY r."createdAt" DESC, r.id DESC
             LIMIT ${c.bind(limit)}`;
  }
  const { rows } = await pool.query<RunRow>(text, c.values);
  return rows;
}

/**
 * One page (plus one row) of a chat's runs, newest first; undefined when the chat is not the
 * caller's (or is deleted).
 */
export async function selectChatRuns(
  pool: Pool,
  scope: { userId: string; chatId: string },
  query: RunListQuery,
): Promise<RunRow[] | undefined> {
  const { rows: chats } = await pool.query(
    `SELECT 1 FROM "Chat" WHERE id = $1 AND "userId" = $2 AND "deletedAt" IS NULL`,
    [scope.chatId, scope.userId],
  );
  if (!chats.length) return undefined;
  const c = new Conditions();
  c.where.push(`r."chatId" = ${c.bind(scope.chatId)}`);
  c.addCommon(query, 'r."createdAt"', 'r.id', query.metadata ?? {});
  if (query.status) c.where.push(`r.status::text = ANY(${c.bind(query.status)}::text[])`);
  const { rows } = await pool.query<RunRow>(
    `SELECT ${SUMMARY_COLUMNS} FROM "Run" r
      WHERE ${c.where.join(' AND ')}
      ORDER BY r."createdAt" DESC, r.id DESC
      LIMIT ${c.bind(query.limit + 1)}`,
    c.values,
  );
  return rows;
}
