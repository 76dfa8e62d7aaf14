/**
 * The streams row: what one open, idle live stream (`GET …/runs/{runId}/events` of a run waiting
 * for plan approval) costs the gateway process in resident memory. Each round on a fresh gateway
 * and worker: resident memory is a high-water mark, so a second batch on the same process would
 * reuse what the first left behind and read low.
 */
import { isTerminal } from './client';
import { startServiceProcesses, type Bench } from './context';
import { repeat } from './measure';
import { spreadOf, withSpread, type Row } from './report';

const MAX_KIB_PER_STREAM = 64;

/** One round: KiB resident per stream, on a gateway of its own. */
async function kibPerStream(bench: Bench, streams: number): Promise<number> {
  const service = await startServiceProcesses(bench);
  const opened: AbortController[] = [];
  try {
    const client = service.client(bench.user);
    const turn = await client.send({
      text: 'crop this to the left half',
      image_urls: [bench.image.url],
      planMode: true,
    });
    await client.pollUntil(turn, (s) => s.status === 'WAITING' || isTerminal(s), 50);
    const url = `${client.runUrl(turn)}/events`;
    const open = async () => {
      const stop = new AbortController();
      opened.push(stop);
      const res = await fetch(url, { headers: bench.user.bearer, signal: stop.signal });
      if (res.status !== 200 || !res.body) throw new Error(`stream ${res.status}`);
      // The snapshot, then nothing: the stream is open and idle.
      const reader = res.body.getReader();
      await reader.read();
    };
    // One stream first, so the gateway's listening connection and code paths are warm.
    await open();
    const before = (await service.gateway.memoryBytes()).rss;
    for (let i = 0; i < streams; i += 100)
      await Promise.all(Array.from({ length: Math.min(100, streams - i) }, open));
    const after = (await service.gateway.memoryBytes()).rss;
    return (after - before) / 1024 / streams;
  } finally {
    for (const stop of opened) stop.abort();
    await service.stop();
  }
}

export async function streamsRow(bench: Bench, streams: number, rounds: number): Promise<Row> {
  console.log(`bench: ${streams} idle live streams, ${rounds} rounds…`);
  const kib = spreadOf(await repeat(rounds, () => kibPerStream(bench, streams)));
  return {
    key: 'streams',
    name: 'streams',
    measure: `KiB resident per open idle stream, n=${streams} ×${rounds}`,
    service: withSpread(kib, 1, ''),
    baseline: '-',
    ratio: '-',
    target: `≤ ${MAX_KIB_PER_STREAM} KiB`,
    meets: kib.median <= MAX_KIB_PER_STREAM,
    data: { streams, kibPerStream: kib },
  };
}
