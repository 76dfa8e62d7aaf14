/** An object the store does not hold; the files route answers it with a plain 404. */
export class ObjectNotFoundError extends Error {
  constructor(key: string) {
    super(`no object stored under ${JSON.stringify(key)}`);
    this.name = 'ObjectNotFoundError';
  }
}

const MAX_KEY_LENGTH = 1024;
const UNSAFE_CHARACTERS = /[\u0000-\u001f\u007f\\]/;

/**
 * Keys are relative, slash-separated paths with no `.`/`..` or empty segments, so the local driver
 * can never be steered outside its root and both drivers accept exactly the same keys.
 */
export function assertValidKey(key: string): void {
  const ok =
    key.length > 0 &&
    key.length <= MAX_KEY_LENGTH &&
    !UNSAFE_CHARACTERS.test(key) &&
    key.split('/').every((segment) => segment !== '' && segment !== '.' && segment !== '..');
  if (!ok) throw new Error(`invalid storage key ${JSON.stringify(key)}`);
}

/** assertValidKey as a yes or no. */
export function isValidKey(key: string): boolean {
  try {
    assertValidKey(key);
    return true;
  } catch {
    return false;
  }
}

/** The key as a URL path: each segment percent-encoded, the slashes kept. */
export function encodeKeyPath(key: string): string {
  return key.split('/').map(encodeURIComponent).join('/');
}

/** Where an upload of a user is stored: `attachments/<userId>/<uuid>`. */
export function attachmentKey(userId: string, id: string): string {
  return `attachments/${userId}/${id}`;
}

/** Where a tool call stores an output: `tools/<userId>/<toolCallId>/<filename>`. */
export function toolOutputKey(userId: string, toolCallId: string, filename: string): string {
  return `tools/${userId}/${toolCallId}/${filename}`;
}

/**
 * Whether a key holds one of `userId`'s own files: an upload or a tool output of theirs, the only
 * objects the service stores for a user (see attachmentKey and toolOutputKey).
 */
export function isKeyOf(key: string, userId: string): boolean {
  const [kind, owner, ...rest] = key.split('/');
  return (kind === 'attachments' || kind === 'tools') && owner === userId && rest.length > 0;
}
