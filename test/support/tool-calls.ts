import type { Pool } from 'pg';

/** A user's latest tool call: its status and how many charges the ledger holds for it. */
export async function latestToolCall(
  pool: Pool,
  userId: string,
): Promise<{ id: string; status: string; charges: string } | undefined> {
  const { rows } = await pool.query<{ id: string; status: string; charges: string }>(
    `SELECT c.id, c.status, (SELECT count(*) FROM "CreditLedgerEntry" l WHERE l."toolCallId" = c.id) AS charges
       FROM "ToolCall" c WHERE c."userId" = $1 ORDER BY c."startedAt" DESC LIMIT 1`,
    [userId],
  );
  return rows[0];
}
