/**
 * Text from outside any request (a model's reply) made storable as it stands: each NUL (which a
 * text column and jsonb refuse) and each lone UTF-16 surrogate (which jsonb refuses) becomes
 * U+FFFD, as a decoder shows a byte it cannot read. What a client sends is refused instead (see
 * `stored` in core/schemas/common.ts).
 */
export function storableText(text: string): string {
  return text.toWellFormed().replaceAll('\u0000', '\uFFFD');
}

/** `storableText` on every string of a JSON value (a model's tool call input). */
export function storableJson<T>(value: T): T {
  if (typeof value === 'string') return storableText(value) as T;
  if (Array.isArray(value)) return value.map(storableJson) as T;
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [storableText(key), storableJson(item)]),
    ) as T;
  return value;
}
