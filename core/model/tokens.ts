/**
 * Tokens a text takes, estimated before the provider counts them: what the context is built to and
 * what a step reserves credits for. A third of its UTF-8 bytes errs high for every tokenizer the
 * providers use (English runs near a quarter, most other scripts take a token per 2-3 bytes), so
 * a context built to it fits the window and a reservation covers the call.
 */
export function estimateTokens(text: string): number {
  return Math.ceil(Buffer.byteLength(text, 'utf8') / 3);
}

/** What one image counts for in an estimate: providers bill a large one at about a thousand tokens or more. */
export const IMAGE_TOKENS = 1_600;
