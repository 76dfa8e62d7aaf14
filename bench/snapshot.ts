/**
 * The snapshot rows: one poll of a run, terminal and running, against the least a route serving a
 * run can do (a bare Express 5 app reading the run row with `pg`). A poll of a run unchanged since
 * the gateway last read it is answered from the gateway's memory (operations/runs/poll-memory.ts);
 * the third row is the poll that reads, right after the run changed.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { isTerminal, serviceClient } from './client';
import type { Bench } from './context';
import { measure, measurePair, recorder } from './measure';
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
    // Right after a change the gateway has let its remembered answer go, and reads. The change is
    // a bare notification of the run (what every write of it sends): the run stays as it was.
    const caller = gateway.ops.identity.rememberedCaller(bench.user.apiKey, 'rest');
    if (!caller) throw new Error('the bench key is not remembered after its polls');
    const afterChange = async () => {
      const service = recorder();
      const baseline = recorder();
      const started = performance.now();
      for (let i = 0; i < polls; i++) {
        await pool.query(`SELECT pg_notify('run_events', $1)`, [waiting.runId]);
        while (gateway.ops.runs.unchangedRun(caller, waiting) !== undefined)
          await new Promise((resolve) => setImmediate(resolve));
        const pair = [() => service.time(poll(waiting, 'WAITING')), () => baseline.time(barePoll(waiting))];
        for (const one of i % 2 === 0 ? pair : pair.reverse()) await one();
      }
      return latencyRow(
        'snapshot',
        'snapshot running, after a change',
        // Throughput is not this row's figure: both sides get the loop's time, waits included.
        service.figures(performance.now() - started, 1),
        baseline.figures(performance.now() - started, 1),
        { p50: MAX_RATIO },
      );
    };
    return [
      await row('snapshot terminal', ended, 'COMPLETE'),
      await row('snapshot running', waiting, 'WAITING'),
      await afterChange(),
    ];
  } finally {
    server.closeAllConnections();
    server.close();
  }
}
