/** The bench as the service's API client: sends, polls and decisions over HTTP, as users make them. */
import { performance } from 'node:perf_hooks';
import { TERMINAL_RUN_STATUSES, type RunSnapshot } from '../core/schemas/runs';
import type { TestUser } from '../testkit/users';

export interface SentTurn {
  chatId: string;
  runId: string;
  /** the Temporal run id of the chat's workflow execution for this turn */
  triggerRunId: string | null;
}

export interface PolledTurn {
  snapshot: RunSnapshot;
  polls: number;
}

export const isTerminal = (s: RunSnapshot) => (TERMINAL_RUN_STATUSES as readonly string[]).includes(s.status);

export type ServiceClient = ReturnType<typeof serviceClient>;

export function serviceClient(baseUrl: string, user: TestUser) {
  const headers = { ...user.bearer, 'content-type': 'application/json' };
  const runUrl = (t: { chatId: string; runId: string }) =>
    `${baseUrl}/api/v1/chats/${t.chatId}/runs/${t.runId}`;

  async function send(body: object, extraHeaders: Record<string, string> = {}): Promise<SentTurn> {
    const res = await fetch(`${baseUrl}/api/v1/completions`, {
      method: 'POST',
      headers: { ...headers, ...extraHeaders },
      body: JSON.stringify(body),
    });
    const json = (await res.json()) as SentTurn;
    if (res.status !== 202) throw new Error(`send ${res.status} ${JSON.stringify(json)}`);
    return json;
  }

  /**
   * Polls the run's snapshot every `intervalMs` (from the start of one poll to the next, or at
   * once when a poll took longer) until `done` holds. Sends the last ETag as If-None-Match, as a
   * careful client does, and takes a 304 as "unchanged".
   */
  async function pollUntil(
    turn: { chatId: string; runId: string },
    done: (s: RunSnapshot) => boolean,
    intervalMs: number,
    deadlineMs = 300_000,
  ): Promise<PolledTurn> {
    const until = performance.now() + deadlineMs;
    let etag: string | null = null;
    let last: RunSnapshot | undefined;
    for (let polls = 1; ; polls++) {
      const started = performance.now();
      const res = await fetch(runUrl(turn), {
        headers: etag ? { ...user.bearer, 'if-none-match': etag } : user.bearer,
      });
      if (res.status === 200) {
        last = (await res.json()) as RunSnapshot;
        etag = res.headers.get('etag');
      } else {
        await res.arrayBuffer();
        if (res.status !== 304 || !last) throw new Error(`snapshot ${res.status}`);
      }
      if (done(last)) return { snapshot: last, polls };
      if (performance.now() > until) throw new Error(`run ${turn.runId} still ${last.status}`);
      const wait = started + intervalMs - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    }
  }

  async function decide(turn: { chatId: string; runId: string }, waitpointId: string, approved: boolean) {
    const res = await fetch(`${runUrl(turn)}/waitpoints/${waitpointId}/complete`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ approved }),
    });
    const body = await res.text();
    if (res.status !== 202) throw new Error(`decision ${res.status} ${body.slice(0, 300)}`);
  }

  return {
    send,
    pollUntil,
    runUrl,
    headers,
    async createChat(): Promise<string> {
      const res = await fetch(`${baseUrl}/api/v1/chats`, { method: 'POST', headers, body: '{}' });
      const json = (await res.json()) as { id: string };
      if (res.status !== 201) throw new Error(`create chat ${res.status} ${JSON.stringify(json)}`);
      return json.id;
    },
    decide,
    /** Polls a plan-mode turn until its plan waits, and approves it. */
    async approvePlan(turn: SentTurn, intervalMs: number): Promise<void> {
      const { snapshot } = await pollUntil(turn, (s) => s.status === 'WAITING' || isTerminal(s), intervalMs);
      const waitpoint = snapshot.waitpoints.find((w) => w.status === 'PENDING');
      if (!waitpoint) throw new Error(`plan-mode turn ${turn.runId}: ${snapshot.status}, no pending plan`);
      await decide(turn, waitpoint.id, true);
    },
    async cancel(turn: { chatId: string; runId: string }): Promise<void> {
      const res = await fetch(`${runUrl(turn)}/cancel`, { method: 'POST', headers: user.bearer });
      await res.arrayBuffer();
    },
    /** Subscribes the user (through its session: endpoints are a console route) to `events` at `url`. */
    async addWebhook(url: string, events: string[]): Promise<void> {
      const res = await fetch(`${baseUrl}/api/webhook-endpoints`, {
        method: 'POST',
        headers: { cookie: user.cookie, 'content-type': 'application/json' },
        body: JSON.stringify({ url, events }),
      });
      if (res.status !== 201) throw new Error(`webhook endpoint: ${res.status} ${await res.text()}`);
    },
  };
}
