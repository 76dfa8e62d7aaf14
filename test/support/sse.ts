import { parseEventStream, type RunEvent } from '../../clients/typescript/src';

export type SseEvent = RunEvent;

/**
 * Reads a `text/event-stream` answer with the client's own parser until the server ends it, or
 * until `stopAfter` says so (leaving the parser drops the connection, as a client losing it would).
 */
export async function readEvents(
  res: Response,
  options: { stopAfter?: (e: SseEvent) => boolean } = {},
): Promise<{ events: SseEvent[]; ended: boolean }> {
  if (!res.body) throw new Error('no body');
  const events: SseEvent[] = [];
  const stream = res.body;
  let stopped = false;
  for await (const event of parseEventStream(stream)) {
    events.push(event);
    if ((stopped = options.stopAfter?.(event) ?? false)) break;
  }
  return { events, ended: !stopped };
}
