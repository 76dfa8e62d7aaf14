/** An answer longer than its reader allows: refused before it is held whole. */
export class ResponseTooLargeError extends Error {
  constructor(readonly maxBytes: number) {
    super(`The answer is larger than ${maxBytes} bytes.`);
    this.name = 'ResponseTooLargeError';
  }
}

/**
 * `res` with its body cut at `maxBytes`: a declared length past it fails at once, and a body that
 * grows past it fails as the bytes arrive, its connection dropped. Whoever reads the answer
 * (`text()`, `json()`, an SDK) so never holds more than `maxBytes` of it.
 */
export function boundedResponse(res: Response, maxBytes: number): Response {
  const declared = Number(res.headers.get('content-length') ?? Number.NaN);
  if (Number.isFinite(declared) && declared > maxBytes) {
    res.body?.cancel().catch(() => undefined);
    throw new ResponseTooLargeError(maxBytes);
  }
  if (!res.body) return res;
  let size = 0;
  const body = res.body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        size += chunk.byteLength;
        if (size > maxBytes) controller.error(new ResponseTooLargeError(maxBytes));
        else controller.enqueue(chunk);
      },
    }),
  );
  return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
}

/** Whether `err`, or an error it was caused by, is a ResponseTooLargeError. */
export function isTooLarge(err: unknown): boolean {
  for (let e = err; e instanceof Error; e = e.cause) if (e instanceof ResponseTooLargeError) return true;
  return false;
}
