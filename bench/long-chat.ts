/**
 * The long-chat row: a turn in a chat of 10,000 messages against a turn in a new chat, on the
 * gateway and worker processes with the local model (issue 48, "Long chats"; issue 50, finding 3).
 * The long chat's first turn writes its summary (compaction) and is reported apart; the turns
 * after it reuse the summary and read at most the messages after it, so they should cost what a
 * turn in a new chat costs.
 */
import { performance } from 'node:perf_hooks';
import { fillLongChat } from '../testkit/long-chat';
import { isTerminal, type ServiceClient } from './client';
import { startServiceProcesses, type Bench, type ServiceProcesses } from './context';
import { sampleCpu, stackProcesses } from './cpu';
import { recorder, repeat } from './measure';
import { latencyRow, type LatencyRound, type Row } from './report';

const MESSAGES = 10_000;
const POLL_MS = 5;
const MAX_RATIO = 1.3;

interface Turn {
  ms: number;
  /** CPU ms of the worker, the gateway and PostgreSQL over the turn */
  cpu: Record<string, number>;
  compacted: boolean;
}

async function turn(
  client: ServiceClient,
  groups: Record<string, number>,
  body: Record<string, unknown>,
): Promise<Turn> {
  const before = await sampleCpu(groups);
  const started = performance.now();
  const sent = await client.send(body);
  const { snapshot } = await client.pollUntil(sent, isTerminal, POLL_MS);
  const ms = performance.now() - started;
  const after = await sampleCpu(groups);
  if (snapshot.status !== 'COMPLETE') throw new Error(`turn ${snapshot.status}: ${snapshot.error}`);
  const cpu: Record<string, number> = {};
  for (const name of Object.keys(groups)) cpu[name] = (after.groups[name] ?? 0) - (before.groups[name] ?? 0);
  return { ms, cpu, compacted: snapshot.usage.compacted };
}

const meanCpu = (turns: Turn[]) => {
  const out: Record<string, number> = {};
  for (const t of turns)
    for (const [k, v] of Object.entries(t.cpu)) out[k] = (out[k] ?? 0) + v / turns.length;
  return out;
};

export async function longChatRow(bench: Bench, samples: number, rounds: number): Promise<Row> {
  console.log(`bench: long chat (${MESSAGES} messages) against new chats, ${samples} turns each ×${rounds}…`);
  const { chatId } = await fillLongChat(bench.stack.db.pool, {
    userId: bench.user.userId,
    messages: MESSAGES,
  });
  const service: ServiceProcesses = await startServiceProcesses(bench);
  try {
    const client = service.client(bench.user);
    const groups: Record<string, number> = { worker: service.worker.pid, gateway: service.gateway.pid };
    const { postgres } = await stackProcesses();
    if (postgres) groups.postgres = postgres;
    // Warm both paths (and the worker's sticky cache) before anything counts.
    await turn(client, groups, { text: 'hello' });
    const first = await turn(client, groups, { text: 'what did we say?', chatId });
    const summary = await bench.stack.db.pool.query<{ messages: number }>(
      `SELECT messages FROM "ChatSummary" WHERE "chatId" = $1`,
      [chatId],
    );
    const longTurns: Turn[] = [];
    const freshTurns: Turn[] = [];
    const measured = await repeat(rounds, async (round): Promise<LatencyRound> => {
      const long = recorder();
      const fresh = recorder();
      const started = performance.now();
      // Interleaved, so both meet the machine as it is at the same moments.
      for (let i = 0; i < samples; i++) {
        const l = await turn(client, groups, { text: `and then ${round}.${i}?`, chatId });
        long.add(l.ms);
        longTurns.push(l);
        const f = await turn(client, groups, { text: `and then ${round}.${i}?` });
        fresh.add(f.ms);
        freshTurns.push(f);
      }
      const wall = performance.now() - started;
      return { service: long.figures(wall, 1), baseline: fresh.figures(wall, 1) };
    });
    return latencyRow(
      'longchat',
      `turn in a ${MESSAGES.toLocaleString('en')}-message chat vs a new chat`,
      measured,
      { p50: MAX_RATIO },
      {
        firstTurn: { ...first, summarisedMessages: summary.rows[0]?.messages ?? 0 },
        laterTurnsCompacted: longTurns.filter((t) => t.compacted).length,
        cpuMsPerTurn: { longChat: meanCpu(longTurns), newChat: meanCpu(freshTurns) },
      },
    );
  } finally {
    await service.stop();
  }
}
