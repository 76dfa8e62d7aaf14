import type { Response } from 'express';

/**
 * What a stream operation yields: an event to send, a sign that nothing happened for a while, or
 * that everything so far was sent (nothing to send: a stream keeps going).
 */
export type StreamedEvent =
  { kind: 'heartbeat' } | { kind: 'caught-up' } | { kind: 'event'; id: number; event: string; data: unknown };

/**
 * Opens a Server-Sent Events stream: `open` gets a signal that aborts when the client goes away
 * (its operation checks everything and may refuse before any byte is sent), then each event is
 * framed as `id:`, `event:` and `data:` lines, a heartbeat as a comment, until the operation's
 * stream ends or the client leaves.
 */
export async function sendEventStream(
  res: Response,
  open: (signal: AbortSignal) => Promise<AsyncIterable<StreamedEvent>>,
): Promise<{ status: 200 }> {
  const closed = new AbortController();
  res.on('close', () => closed.abort());
  const stream = await open(closed.signal);
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-store',
    // Proxies that buffer answers (nginx) would hold the events back.
    'x-accel-buffering': 'no',
  });
  res.flushHeaders();
  for await (const e of stream) {
    if (closed.signal.aborted) break;
    if (e.kind === 'caught-up') continue;
    res.write(
      e.kind === 'heartbeat'
        ? ': ping\n\n'
        : `id: ${e.id}\nevent: ${e.event}\ndata: ${JSON.stringify(e.data)}\n\n`,
    );
  }
  res.end();
  return { status: 200 };
}
