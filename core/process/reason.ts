/**
 * A failure as one readable sentence, whatever was thrown: an Error's message (with its cause), a
 * string, or, for a rejection with no value at all, a sentence saying so instead of "undefined".
 */
export function reasonOf(err: unknown): string {
  if (err instanceof AggregateError && err.errors.length > 0) {
    return err.errors.map(reasonOf).join('; ');
  }
  if (err instanceof Error) {
    const cause = err.cause === undefined ? '' : ` (${reasonOf(err.cause)})`;
    return (err.message || err.name) + cause;
  }
  if (err === undefined || err === null || err === '') return 'it failed without giving a reason';
  return typeof err === 'string' ? err : JSON.stringify(err);
}
