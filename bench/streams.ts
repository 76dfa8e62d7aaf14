/**
 * The streams rows: what one open, idle live stream (`GET …/runs/{runId}/events` of a run waiting
 * for plan approval) costs the gateway process in resident memory, and how long a run's event
 * takes to reach its stream with BENCH_STREAMS others open against none. Each round on a fresh
 * gateway and worker: resident memory is a high-water mark, so a second batch on the same process
 * would reuse what the first left behind and read low.
 */
import { performance } from 'node:perf_hooks';
import { isTerminal } from './client';
import { startServiceProcesses, type Bench } from './context';
import { recorder, repeat } from './measure';
import { latencyRow, spreadOf, withSpread, type LatencyRound, type Row } from './report';

const MAX_KIB_PER_STREAM = 16;
/** Events timed on the probe's stream, with none and with the others open. */
const EVENTS = 40;
/** With the others open, an event reaches its stream within this many times the time with none. */
const LATENCY_BOUND = 2;

interface Round {
  kibPerStream: number;
  /** The live heap's share of it, after a full collection: what the stream's objects hold. */
  heapKibPerStream: number;
  latency: LatencyRound;
}

/** One round on a gateway of its own: KiB resident per idle stream, and the probe's event latency. */
async function streamsRound(bench: Bench, streams: number): Promise<Round> {
  const service = await startServiceProcesses(bench);
  const opened: AbortController[] = [];
  try {
    const client = service.client(bench.user);
    const waiting = async () => {
      const turn = await client.send({
        text: 'crop this to the left half',
        image_urls: [bench.image.url],
        planMode: true,
      });
      await client.pollUntil(turn, (s) => s.status === 'WAITING' || isTerminal(s), 50);
      return turn;
    };
    // The idle streams follow one run; the probe another, whose events wake its stream only.
    const idle = await waiting();
    const probed = await waiting();
    const stream = async (turn: { chatId: string; runId: string }) => {
      const stop = new AbortController();
      opened.push(stop);
      const res = await fetch(`${client.runUrl(turn)}/events`, {
        headers: bench.user.bearer,
        signal: stop.signal,
      });
      if (res.status !== 200 || !res.body) throw new Error(`stream ${res.status}`);
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      // The snapshot, then nothing: the stream is open and idle.
      await reader.read();
      return reader;
    };
    const probe = await stream(probed);
    /** The time from an event's commit to its arrival on the probe's stream, EVENTS times. */
    const timeEvents = async () => {
      const rec = recorder();
      const t0 = performance.now();
      for (let i = 0; i < EVENTS; i++) {
        const start = performance.now();
        await bench.stack.db.pool.query(`SELECT run_event_append($1, 'text.delta', '{"text": "."}'::jsonb)`, [
          probed.runId,
        ]);
        let text = '';
        while (!text.includes('event: text.delta')) {
          const { value, done } = await probe.read();
          if (done) throw new Error('the probed stream ended');
          text += value;
        }
        rec.add(performance.now() - start);
      }
      return rec.figures(performance.now() - t0, 1);
    };
    const baseline = await timeEvents();
    // One idle stream first, so the gateway's code paths are warm.
    await stream(idle);
    const before = await service.gateway.memoryBytes();
    for (let i = 0; i < streams; i += 100)
      await Promise.all(Array.from({ length: Math.min(100, streams - i) }, () => stream(idle)));
    const after = await service.gateway.memoryBytes();
    const withOthers = await timeEvents();
    return {
      kibPerStream: (after.rss - before.rss) / 1024 / streams,
      heapKibPerStream: (after.heapUsed - before.heapUsed) / 1024 / streams,
      latency: { service: withOthers, baseline },
    };
  } finally {
    for (const stop of opened) stop.abort();
    await service.stop();
  }
}

export async function streamsRows(bench: Bench, streams: number, rounds: number): Promise<Row[]> {
  console.log(`bench: ${streams} idle live streams, ${rounds} rounds…`);
  const measured = await repeat(rounds, () => streamsRound(bench, streams));
  const kib = spreadOf(measured.map((r) => r.kibPerStream));
  const heapKib = spreadOf(measured.map((r) => r.heapKibPerStream));
  return [
    {
      key: 'streams',
      name: 'streams',
      measure: `KiB resident per open idle stream, n=${streams} ×${rounds}`,
      service: `${withSpread(kib, 1, '')}; heap ${withSpread(heapKib, 1, '')}`,
      baseline: '-',
      ratio: '-',
      target: `≤ ${MAX_KIB_PER_STREAM} KiB`,
      meets: kib.median <= MAX_KIB_PER_STREAM,
      data: { streams, kibPerStream: kib, heapKibPerStream: heapKib },
    },
    latencyRow(
      'streams',
      `streams: an event to its stream, ${streams} others open vs none`,
      measured.map((r) => r.latency),
      { p50: LATENCY_BOUND, p99: LATENCY_BOUND },
      { streams },
    ),
  ];
}
