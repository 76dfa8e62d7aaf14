/**
 * The snapshot rows: one poll of a run that reads it (terminal, and running), against the least a
 * route serving that poll can do: a bare Express 5 app that checks the same API key and reads the
 * same data (the run, its tool calls, its waitpoints and its webhook deliveries) in one statement.
 *
 * A poll of a run unchanged since the gateway last read it is answered from the gateway's memory
 * (operations/runs/poll-memory.ts), which reads nothing: against a route that reads, that would
 * compare no work with some. So before each of the service's polls the bench sends the run's
 * `run_events` notification (what every write of a run sends; the run itself stays as it was) and
 * waits until the gateway has let its remembered answer go: every poll measured reads.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { KEY_IS_LIVE, keyHashOf } from './bare-key';
import { isTerminal, serviceClient } from './client';
import type { Bench } from './context';
import { recorder, repeat } from './measure';
import { latencyRow, type Row } from './report';

const MAX_RATIO = 1.3;

/**
 * The run as one statement reads it for the owner of the key: no row for a revoked or unknown key,
 * another user's chat, a deleted chat or another chat's run.
 */
const BARE_SNAPSHOT = `
  SELECT to_jsonb(r) AS run,
         COALESCE((SELECT jsonb_agg(to_jsonb(t) ORDER BY t."startedAt", t.id)
                     FROM "ToolCall" t WHERE t."runId" = r.id), '[]'::jsonb) AS "toolCalls",
         COALESCE((SELECT jsonb_agg(to_jsonb(w) ORDER BY w."createdAt", w.id)
                     FROM "Waitpoint" w WHERE w."runId" = r.id), '[]'::jsonb) AS waitpoints,
         COALESCE((SELECT jsonb_agg(to_jsonb(d) ORDER BY d."createdAt")
                     FROM "WebhookDelivery" d JOIN "WebhookEndpoint" e ON e.id = d."endpointId"
                    WHERE e."userId" = k."userId" AND d."idempotencyKey" = r.id::text), '[]'::jsonb) AS webhooks
    FROM "ApiKey" k
    JOIN "Chat" c ON c."userId" = k."userId" AND c.id = $2 AND c."deletedAt" IS NULL
    JOIN "Run" r ON r."chatId" = c.id AND r.id = $3
   WHERE ${KEY_IS_LIVE('$1')}`;

export async function snapshotRows(bench: Bench, polls: number, rounds: number): Promise<Row[]> {
  console.log(`bench: snapshot poll, ${polls} each, ${rounds} rounds…`);
  const { gateway } = await bench.inProcess();
  const client = serviceClient(gateway.url, bench.user);
  const { pool } = bench.stack.db;

  const app = express();
  app.get('/chats/:chatId/runs/:runId', async (req, res) => {
    const key = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1];
    if (!key) return void res.status(401).json({ error: 'unauthorized' });
    const { rows } = await pool.query(BARE_SNAPSHOT, [keyHashOf(key), req.params.chatId, req.params.runId]);
    if (!rows.length) res.status(404).json({ error: 'not found' });
    else res.json(rows[0]);
  });
  const server: Server = await new Promise((r) => {
    const s = app.listen(0, '127.0.0.1', () => r(s));
  });
  const bareUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    const poll = (turn: { chatId: string; runId: string }, status: string) => async () => {
      const res = await fetch(client.runUrl(turn), { headers: bench.user.bearer });
      const snapshot = (await res.json()) as { status: string };
      if (res.status !== 200 || snapshot.status !== status)
        throw new Error(`snapshot ${res.status} ${snapshot.status}`);
    };
    const barePoll = (turn: { chatId: string; runId: string }, status: string) => async () => {
      const res = await fetch(`${bareUrl}/chats/${turn.chatId}/runs/${turn.runId}`, {
        headers: bench.user.bearer,
      });
      const body = (await res.json()) as { run?: { status?: string } };
      if (res.status !== 200 || body.run?.status !== status)
        throw new Error(`bare snapshot ${res.status} ${body.run?.status}`);
    };

    const ended = await client.send({ text: 'hello bench' });
    await client.pollUntil(ended, isTerminal, 20);
    // A plan-mode turn waiting for approval: a live run, with a waitpoint to read.
    const waiting = await client.send({
      text: 'crop this to the left half',
      image_urls: [bench.image.url],
      planMode: true,
    });
    await client.pollUntil(waiting, (s) => s.status === 'WAITING' || isTerminal(s), 50);
    const caller = gateway.ops.identity.rememberedCaller(bench.user.apiKey, 'rest');
    if (!caller) throw new Error('the bench key is not remembered after its polls');

    /** Until the gateway has let its remembered answer for the run go, so that its next poll reads. */
    const forget = async (turn: { chatId: string; runId: string }) => {
      await pool.query(`SELECT pg_notify('run_events', $1)`, [turn.runId]);
      while (gateway.ops.runs.unchangedRun(caller, turn) !== undefined)
        await new Promise((resolve) => setImmediate(resolve));
    };
    /** One round: `n` polls of each side, alternating which goes first. */
    const once = async (turn: { chatId: string; runId: string }, status: string, n = polls) => {
      const service = recorder();
      const baseline = recorder();
      const started = performance.now();
      for (let i = 0; i < n; i++) {
        await forget(turn);
        const pair = [() => service.time(poll(turn, status)), () => baseline.time(barePoll(turn, status))];
        for (const one of i % 2 === 0 ? pair : pair.reverse()) await one();
      }
      // Throughput is not this row's figure: both sides get the loop's time, waits included.
      const wallMs = performance.now() - started;
      return { service: service.figures(wallMs, 1), baseline: baseline.figures(wallMs, 1) };
    };
    const row = async (name: string, turn: { chatId: string; runId: string }, status: string) => {
      await once(turn, status, 100); // warm-up, uncounted
      return latencyRow('snapshot', name, await repeat(rounds, () => once(turn, status)), { p50: MAX_RATIO });
    };
    return [
      await row('snapshot terminal', ended, 'COMPLETE'),
      await row('snapshot running', waiting, 'WAITING'),
    ];
  } finally {
    server.closeAllConnections();
    server.close();
  }
}
