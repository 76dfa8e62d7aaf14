/** The console's one way to the service: the session cookie, JSON in and out, the API's envelope. */

/** The public routes, mounted again for the signed-in session (see RouteTable.mirrorForSession). */
export const V1 = '/console/api/v1';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly body: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

let onSignedOut: () => void = () => undefined;
/** Called when a request answers 401: the session ended (expired, signed out elsewhere). */
export function whenSignedOut(handler: () => void): void {
  onSignedOut = handler;
}

/** Words a field's name is made of that read as capitals. */
const ACRONYMS = new Set(['url', 'urls', 'id', 'ids', 'api']);

/**
 * A detail's field as a person reads it: `body.image_url` is "Image URL", `body.video_urls.1` is
 * "Video URLs" (where it sits in the request, and which item, say nothing to them).
 */
export function fieldName(path: string): string {
  const named = path.split('.').filter((p) => !/^\d+$/.test(p) && !/^(body|query|params|headers)$/.test(p));
  const words = (named.at(-1) ?? '')
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .split(/[_\s-]+/)
    .filter(Boolean)
    .map((w) => (ACRONYMS.has(w.toLowerCase()) ? w.toUpperCase().replace(/S$/, 's') : w.toLowerCase()));
  const text = words.join(' ');
  return text.charAt(0).toUpperCase() + text.slice(1);
}

async function errorOf(res: Response): Promise<ApiError> {
  const body = (await res.json().catch(() => ({}))) as Record<string, unknown>;
  const details = Array.isArray(body.details)
    ? (body.details as { path: string; message: string }[]).map((d) => {
        const field = fieldName(d.path);
        return field ? `${field}: ${d.message}` : d.message;
      })
    : [];
  const message =
    typeof body.error === 'string'
      ? [body.error, ...details].join(' ')
      : `The service answered ${res.status} ${res.statusText}.`;
  return new ApiError(
    res.status,
    typeof body.code === 'string' ? body.code : 'HTTP_' + res.status,
    message,
    body,
  );
}

export async function request(
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Response> {
  const init: RequestInit = { method, headers: { ...headers }, credentials: 'same-origin' };
  if (body instanceof FormData) init.body = body;
  else if (body !== undefined) {
    init.body = JSON.stringify(body);
    (init.headers as Record<string, string>)['content-type'] = 'application/json';
  }
  let res: Response;
  try {
    res = await fetch(path, init);
  } catch {
    throw new ApiError(0, 'NETWORK', 'The service could not be reached; check the connection and retry.');
  }
  if (res.ok || res.status === 304) return res;
  const error = await errorOf(res);
  if (res.status === 401 && !path.startsWith('/api/auth/sign-')) onSignedOut();
  throw error;
}

export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const res = await request(method, path, body);
  return (res.status === 204 ? undefined : await res.json()) as T;
}

export const get = <T>(path: string) => api<T>('GET', path);
export const post = <T>(path: string, body?: unknown) => api<T>('POST', path, body ?? {});
export const patch = <T>(path: string, body: unknown) => api<T>('PATCH', path, body);
export const del = (path: string) => api<void>('DELETE', path);

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
