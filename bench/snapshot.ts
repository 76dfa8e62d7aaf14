/**
 * The snapshot rows: one poll of a run, terminal and running, against the least a route serving a
 * run can do (a bare Express 5 app reading the run row with `pg`).
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { isTerminal, serviceClient } from './client';
import type { Bench } from './context';
import { measure, measurePair } from './measure';
import { latencyRow, type Row } from './report';

const MAX_RATIO = 1.3;

export async function snapshotRows(bench: Bench, polls: number): Promise<Row[]> {
  console.log(`bench: snapshot poll, ${polls} each…`);
  const { gateway } = await bench.inProcess();
  const client = serviceClient(gateway.url, bench.user);
  const { pool } = bench.stack.db;

  const app = express();
  app.get('/runs/:runId', async (req, res) => {
    const { rows } = await pool.query(`SELECT * FROM "Run" WHERE id = $1 AND "userId" = $2`, [
      req.params.runId,
      bench.user.userId,
    ]);
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
    const barePoll = (turn: { runId: string }) => async () => {
      const res = await fetch(`${bareUrl}/runs/${turn.runId}`);
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`bare snapshot ${res.status}`);
    };
    const row = async (name: string, turn: { chatId: string; runId: string }, status: string) => {
      await measure(poll(turn, status), 100, 4);
      await measure(barePoll(turn), 100, 4);
      const { service, baseline } = await measurePair(poll(turn, status), barePoll(turn), polls, 1);
      return latencyRow('snapshot', name, service, baseline, { p50: MAX_RATIO });
    };

    const ended = await client.send({ text: 'hello bench' });
    await client.pollUntil(ended, isTerminal, 20);
    // A plan-mode turn waiting for approval: its workflow is live, so the service may ask it too.
    const waiting = await client.send({
      text: 'crop this to the left half',
      image_urls: [bench.image.url],
      planMode: true,
    });
    await client.pollUntil(waiting, (s) => s.status === 'WAITING' || isTerminal(s), 50);
    return [
      await row('snapshot terminal', ended, 'COMPLETE'),
      await row('snapshot running', waiting, 'WAITING'),
    ];
  } finally {
    server.closeAllConnections();
    server.close();
  }
}
