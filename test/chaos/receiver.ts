/**
 * The chaos suite's webhook receiver, a process of its own so the suite can SIGKILL it. It acts
 * on each delivery once, by its `x-svc-delivery-id` (one per envelope `id` here, as the suite
 * redelivers nothing; the id the suite's checks count by), as a receiver that follows
 * docs/webhooks.md does by the signed envelope `id`, and keeps its log in a file that outlives it
 * (one JSON line per POST, appended before the answer): `applied` for the first POST of an id,
 * `duplicate` for a re-POST of an id it already applied, `refused` for a POST it failed on
 * purpose. It fails the first POST of about one delivery in four (chosen by a hash of the id and
 * the seed) with a 503, so retries are exercised on every run, and a retry always finds it willing.
 *
 * So that a fault can land while a POST is open, the suite can see and hold requests: `GET /open`
 * lists the POSTs read and not yet answered (with the sender's port, which tells the worker that
 * sent it), `POST /hold` holds every POST that arrives until `POST /release` (or HOLD_MAX_MS, well
 * inside an attempt's 10 s deadline).
 *
 * Usage: node --import tsx test/chaos/receiver.ts <port> <log file> <seed>
 */
import { createHash } from 'node:crypto';
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';

const [port, logFile, seed] = process.argv.slice(2) as [string, string, string];

export interface ReceiverLine {
  outcome: 'applied' | 'duplicate' | 'refused';
  deliveryId: string;
  event: string;
  key: string;
}

/** A POST read and not yet answered: its delivery and the sender's port. */
export interface OpenPost {
  deliveryId: string;
  port: number;
}

/** The longest a POST is held: a worker's attempt gives up after 10 s. */
const HOLD_MAX_MS = 4_000;

const applied = new Set<string>();
const refused = new Set<string>();
if (existsSync(logFile)) {
  for (const line of readFileSync(logFile, 'utf8').split('\n').filter(Boolean)) {
    const entry = JSON.parse(line) as ReceiverLine;
    if (entry.outcome === 'refused') refused.add(entry.deliveryId);
    else applied.add(entry.deliveryId);
  }
}

const failsFirst = (id: string) => createHash('sha256').update(`${seed}:${id}`).digest()[0]! % 4 === 0;

const open = new Set<OpenPost>();
let holding = false;
let releaseAll: () => void = () => undefined;
let released = Promise.resolve();
const hold = () => {
  if (holding) return;
  holding = true;
  released = new Promise((resolve) => (releaseAll = resolve));
};
const release = () => {
  holding = false;
  releaseAll();
};

createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/open') {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify([...open]));
    return;
  }
  if (req.method === 'POST' && (req.url === '/hold' || req.url === '/release')) {
    if (req.url === '/hold') hold();
    else release();
    res.writeHead(204).end();
    return;
  }
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const envelope = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
      event: string;
      data: { runId?: string; toolCallId?: string };
    };
    const deliveryId = String(req.headers['x-svc-delivery-id']);
    const post: OpenPost = { deliveryId, port: req.socket.remotePort ?? 0 };
    open.add(post);
    const answer = () => {
      open.delete(post);
      const key = envelope.event === 'tool.completed' ? envelope.data.toolCallId : envelope.data.runId;
      let outcome: ReceiverLine['outcome'];
      if (applied.has(deliveryId)) outcome = 'duplicate';
      else if (failsFirst(deliveryId) && !refused.has(deliveryId)) outcome = 'refused';
      else outcome = 'applied';
      const line: ReceiverLine = { outcome, deliveryId, event: envelope.event, key: String(key) };
      appendFileSync(logFile, `${JSON.stringify(line)}\n`);
      if (outcome === 'refused') refused.add(deliveryId);
      else applied.add(deliveryId);
      res.writeHead(outcome === 'refused' ? 503 : 204).end();
    };
    // The sender gave up (its worker died) while the POST was held: nothing is applied for it.
    let gone = false;
    res.once('close', () => {
      gone = !res.writableEnded;
      open.delete(post);
    });
    if (!holding) return answer();
    void Promise.race([released, new Promise((resolve) => setTimeout(resolve, HOLD_MAX_MS))]).then(() => {
      if (!gone) answer();
    });
  });
}).listen(Number(port), '127.0.0.1', () => console.log(`receiver listening on ${port}`));
