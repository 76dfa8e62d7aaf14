import { writeFile, mkdtemp } from 'node:fs/promises';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { generate } from 'selfsigned';

/** One request as it reached the receiver: the raw bytes, before any parsing. */
export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  rawBody: Buffer;
  /** performance.now() when the request's headers arrived. */
  arrivedAt: number;
}

/**
 * An answer: a status (and body), given after `delayMs` when set, or `hang` to hold the request open
 * without ever answering.
 */
export type ReceiverAnswer = { status: number; body?: string; delayMs?: number } | 'hang';

export interface HttpsReceiver {
  /** `https://127.0.0.1:<port>/hook`. */
  url: string;
  requests: ReceivedRequest[];
  /** Answers taken in order, one per request; when they run out, `fallback` answers. */
  program(answers: ReceiverAnswer[], fallback?: ReceiverAnswer): void;
  /** Resolves once `count` requests have arrived. */
  waitForRequests(count: number, timeoutMs?: number): Promise<ReceivedRequest[]>;
  close(): Promise<void>;
}

interface ReceiverCertificate {
  key: string;
  cert: string;
  /** A PEM file of the certificate, for OUTBOUND_CA_FILE. */
  caFile: string;
}

let certificate: Promise<ReceiverCertificate> | undefined;

/** One self-signed certificate for 127.0.0.1 and localhost, shared by every receiver of a run. */
export function receiverCertificate(): Promise<ReceiverCertificate> {
  certificate ??= (async () => {
    const pems = await generate([{ name: 'commonName', value: 'localhost' }], {
      keyType: 'ec',
      curve: 'P-256',
      notAfterDate: new Date(Date.now() + 24 * 3600 * 1000),
      extensions: [
        { name: 'basicConstraints', cA: true },
        { name: 'keyUsage', digitalSignature: true, keyCertSign: true },
        { name: 'extKeyUsage', serverAuth: true },
        {
          name: 'subjectAltName',
          altNames: [
            { type: 7, ip: '127.0.0.1' },
            { type: 2, value: 'localhost' },
          ],
        },
      ],
    });
    const caFile = path.join(await mkdtemp(path.join(tmpdir(), 'svc-receiver-')), 'ca.pem');
    await writeFile(caFile, pems.cert);
    return { key: pems.private, cert: pems.cert, caFile };
  })();
  return certificate;
}

/** A real HTTPS server on loopback that records what it receives and answers as programmed. */
export async function startHttpsReceiver(
  answers: ReceiverAnswer[] = [],
  fallback: ReceiverAnswer = { status: 200 },
): Promise<HttpsReceiver> {
  const { key, cert } = await receiverCertificate();
  const requests: ReceivedRequest[] = [];
  let queue = [...answers];
  let otherwise = fallback;
  const waiters: (() => void)[] = [];

  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const arrivedAt = performance.now();
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      requests.push({
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        rawBody: Buffer.concat(chunks),
        arrivedAt,
      });
      for (const wake of waiters.splice(0)) wake();
      const answer = queue.shift() ?? otherwise;
      if (answer === 'hang') return;
      const send = () =>
        res
          .writeHead(answer.status, { 'content-type': 'text/plain' })
          .end(answer.body ?? `status ${answer.status}`);
      if (answer.delayMs) setTimeout(send, answer.delayMs);
      else send();
    });
  };

  const server: Server = createServer({ key, cert }, handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `https://127.0.0.1:${port}/hook`,
    requests,
    program(next, nextFallback = otherwise) {
      queue = [...next];
      otherwise = nextFallback;
    },
    async waitForRequests(count, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      while (requests.length < count) {
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`expected ${count} requests, received ${requests.length}`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, left);
          waiters.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
      return requests.slice(0, count);
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
