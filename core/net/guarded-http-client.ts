import dns from 'node:dns';
import { readFileSync } from 'node:fs';
import type { LookupAddress, LookupOptions } from 'node:dns';
import type { Readable } from 'node:stream';
import { rootCertificates } from 'node:tls';
import { Agent, errors as undiciErrors, request } from 'undici';
import type { Config } from '../config/config';
import { isPublicAddress, literalAddress } from './address-policy';
import { GuardedHttpError, type GuardedHttp, type GuardedRequest, type GuardedStream } from './guarded-http';

const DEFAULT_MAX_REDIRECTS = 3;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

type LookupCallback = (
  err: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;
export type LookupFunction = (hostname: string, options: LookupOptions, callback: LookupCallback) => void;

export interface GuardedHttpOptions {
  /** The resolver; tests swap it to map a name without touching DNS. */
  lookup?: LookupFunction;
  /**
   * `host:port` origins whose address check is skipped. Only tests set it: it lets a loopback
   * server play a public site, so what it redirects to is still checked.
   */
  trustedOrigins?: readonly string[];
}

export type GuardedHttpConfig = Pick<
  Config,
  'ALLOW_PRIVATE_NETWORK_URLS' | 'OUTBOUND_CA_FILE' | 'FETCH_TIMEOUT' | 'FETCH_MAX_BYTES'
>;

/**
 * The SSRF-guarded outbound client. Names are resolved inside the connection's own lookup, and
 * every resolved address is checked there, so the address checked is the address connected to:
 * a name that resolves to a public address for a pre-check and to 127.0.0.1 a moment later
 * (DNS rebinding) still cannot reach loopback. Literal-address hosts never reach the lookup and
 * are checked before the request is sent. Redirects are followed by hand, each hop checked anew.
 */
export function createGuardedHttp(config: GuardedHttpConfig, options: GuardedHttpOptions = {}): GuardedHttp {
  const allowPrivate = config.ALLOW_PRIVATE_NETWORK_URLS;
  const baseLookup: LookupFunction = options.lookup ?? (dns.lookup as unknown as LookupFunction);
  const trusted = new Set(options.trustedOrigins ?? []);

  const guardedLookup: LookupFunction = (hostname, lookupOptions, callback) => {
    baseLookup(hostname, { ...lookupOptions, all: true }, (err, addresses) => {
      const list = err ? [] : (addresses as LookupAddress[]);
      // One refused address refuses the name: a round-robin answer must not be a lottery. A name
      // that does not resolve is refused in the very same words: were the two told apart, anyone
      // could map which internal names exist (one resolves to a private address, one does not).
      const blocked = allowPrivate ? undefined : list.find((a) => !isPublicAddress(a.address));
      if (blocked || list.length === 0) {
        return callback(
          new GuardedHttpError(
            'BLOCKED_ADDRESS',
            `${hostname} may not be reached.`,
            err ? { cause: err } : undefined,
          ),
          [],
        );
      }
      if (lookupOptions.all) return callback(null, list);
      const first = list[0] as LookupAddress;
      return callback(null, first.address, first.family);
    });
  };

  const ca = config.OUTBOUND_CA_FILE
    ? [...rootCertificates, readFileSync(config.OUTBOUND_CA_FILE, 'utf8')]
    : undefined;
  const dispatcher = new Agent({
    connect: { lookup: guardedLookup, ...(ca ? { ca } : {}) },
  });

  function checkUrl(raw: string): URL {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw new GuardedHttpError('BAD_URL', 'The URL is not valid.');
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new GuardedHttpError('BAD_URL', 'Only http and https URLs may be fetched.');
    }
    if (url.username || url.password)
      throw new GuardedHttpError('BAD_URL', 'URLs with credentials are refused.');
    const literal = literalAddress(url.hostname);
    if (literal && !allowPrivate && !trusted.has(originOf(url)) && !isPublicAddress(literal)) {
      throw new GuardedHttpError('BLOCKED_ADDRESS', 'The URL points at an address that may not be reached.');
    }
    return url;
  }

  /** One hop: the response with its body unread, or a redirect (its body drained). */
  async function once(url: URL, init: GuardedRequest, signal: AbortSignal) {
    const res = await request(url, {
      method: init.method ?? 'GET',
      headers: init.headers,
      body: init.body,
      signal,
      // A trusted (test) origin connects through the plain resolver; everything else is guarded.
      dispatcher: trusted.has(originOf(url)) ? trustedDispatcher() : dispatcher,
    });
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(res.headers)) {
      if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
    }
    if (REDIRECT_STATUSES.has(res.statusCode) && headers.location) {
      await res.body.dump();
      return { status: res.statusCode, headers, location: headers.location };
    }
    return { status: res.statusCode, headers, body: res.body };
  }

  let trustedAgent: Agent | undefined;
  function trustedDispatcher(): Agent {
    trustedAgent ??= new Agent({ connect: ca ? { ca } : {} });
    return trustedAgent;
  }

  async function open(rawUrl: string, init: GuardedRequest = {}): Promise<GuardedStream> {
    const timeoutMs = init.timeoutMs ?? config.FETCH_TIMEOUT;
    const maxBytes = init.maxBytes ?? config.FETCH_MAX_BYTES;
    const maxRedirects = init.maxRedirects ?? DEFAULT_MAX_REDIRECTS;
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = init.signal ? AbortSignal.any([init.signal, timeout]) : timeout;
    const tooLarge = () =>
      new GuardedHttpError('TOO_LARGE', `The response is larger than ${maxBytes} bytes.`);
    let url = checkUrl(rawUrl);
    let current = init;
    try {
      for (let hop = 0; ; hop++) {
        const res = await once(url, current, signal);
        if (res.body) {
          const body = res.body;
          const declared = Number(res.headers['content-length']);
          const declaredBytes = Number.isFinite(declared) ? declared : undefined;
          if (declaredBytes !== undefined && declaredBytes > maxBytes) {
            drop(body);
            throw tooLarge();
          }
          return {
            status: res.status,
            headers: res.headers,
            url: url.toString(),
            declaredBytes,
            discard: () => drop(body),
            async *chunks(take) {
              let size = 0;
              try {
                for await (const chunk of body) {
                  const bytes = (chunk as Buffer).length;
                  size += bytes;
                  if (size > maxBytes) throw tooLarge();
                  if (take && !take(bytes))
                    throw new GuardedHttpError('TOO_LARGE', 'The response is larger than allowed.');
                  yield chunk as Buffer;
                }
              } catch (err) {
                drop(body);
                throw toGuardedError(err, timeout, timeoutMs);
              }
            },
          };
        }
        if (maxRedirects === 0)
          throw new GuardedHttpError('REDIRECT_REFUSED', 'Redirects are refused for this request.');
        if (hop >= maxRedirects)
          throw new GuardedHttpError('TOO_MANY_REDIRECTS', `More than ${maxRedirects} redirects.`);
        url = checkUrl(new URL(res.location, url).toString());
        // 303, and 301/302 after a POST, turn into a body-less GET, as browsers do.
        if (res.status === 303 || ((res.status === 301 || res.status === 302) && current.method === 'POST')) {
          current = { ...current, method: 'GET', body: undefined };
        }
      }
    } catch (err) {
      throw toGuardedError(err, timeout, timeoutMs);
    }
  }

  return {
    open,
    async request(rawUrl, init = {}) {
      const res = await open(rawUrl, init);
      const chunks: Buffer[] = [];
      for await (const chunk of res.chunks()) chunks.push(chunk);
      return { status: res.status, headers: res.headers, body: Buffer.concat(chunks), url: res.url };
    },
  };
}

/**
 * Destroys a body nobody will read. undici reports a destroyed body as an 'error' event, which
 * nobody listens for any more: unhandled, it would take the whole process down.
 */
function drop(body: Readable): void {
  body.on('error', () => undefined);
  body.destroy();
}

function originOf(url: URL): string {
  return `${url.hostname}:${url.port || (url.protocol === 'https:' ? '443' : '80')}`;
}

function toGuardedError(err: unknown, timeout: AbortSignal, timeoutMs: number): GuardedHttpError {
  if (err instanceof GuardedHttpError) return err;
  // undici wraps errors raised while connecting; the lookup's refusal may sit one level down.
  const cause = (err as { cause?: unknown }).cause;
  if (cause instanceof GuardedHttpError) return cause;
  if (timeout.aborted) return new GuardedHttpError('TIMEOUT', `No complete answer within ${timeoutMs} ms.`);
  if (err instanceof undiciErrors.RequestAbortedError || (err as Error).name === 'AbortError') {
    return new GuardedHttpError('TIMEOUT', 'The request was aborted.');
  }
  return new GuardedHttpError('NETWORK', `The request failed: ${(err as Error).message}`);
}
