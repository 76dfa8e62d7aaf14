import assert from 'node:assert/strict';
import { get as httpGet } from 'node:http';
import { BACKGROUND_NICE } from '../../apps/stack/process/priority';
import { liveProcess } from '../../apps/stack/process/procfs';
import { send, signUp, startImageServer, startReceiver, subscribe, type Account } from '../faults/support';
import { expectedPriority, priorityOf } from '../support/priority';
import { waitFor } from '../support/wait';
import { theCluster } from './hooks';
import type { Cluster, ClusterProcess } from './support';

const TERMINAL = ['COMPLETE', 'FAILED', 'CANCELLED'];
/** What npm run start:cluster runs below the gateways' CPU priority (STACK_BACKGROUND_NICE's default). */
const BACKGROUND: readonly ClusterProcess[] = ['worker 1', 'worker 2', 'history', 'matching'];
const niceOf = (p: ClusterProcess) => (BACKGROUND.includes(p) ? BACKGROUND_NICE : 0);

type Kind = 'text' | 'tool' | 'plan';
interface Turn {
  runId: string;
  chatId: string;
  kind: Kind;
}

/**
 * A request a gateway does not answer within this is hung: a gateway that dies must leave its
 * connections closed (the client retries at once), never open and silent.
 */
const HUNG_MS = 30_000;

/** A POST through the one address; says its status. */
async function post(url: string, headers: Record<string, string>, body: unknown): Promise<number> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(HUNG_MS),
  });
  await res.arrayBuffer();
  return res.status;
}

/** A GET on a connection of its own, closed after it; says its status. */
function freshConnectionGet(url: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpGet(url, { headers, agent: false }, (res) => {
      res.resume();
      res.once('end', () => resolve(res.statusCode ?? 0));
    });
    req.once('error', reject);
  });
}

describe('the cluster topology (npm run start:cluster)', function () {
  this.timeout(600_000);
  let cluster: Cluster;
  let account: Account;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let image: Awaited<ReturnType<typeof startImageServer>>;
  const table: string[] = [];

  before(async () => {
    cluster = theCluster();
    account = await signUp(cluster.url);
    receiver = await startReceiver();
    await subscribe(cluster.url, account, receiver.url);
    image = await startImageServer({ width: 64, height: 48, background: '#37a' });
  });
  after(async () => {
    await receiver?.close();
    await image?.close();
    if (table.length) {
      console.log(
        [
          '',
          '      | killed (SIGKILL) | turns | started again after | end states | doubled | deliveries |',
          '      |---|---|---|---|---|---|',
          ...table.map((row) => `      ${row}`),
        ].join('\n'),
      );
    }
  });

  const statuses = async (runIds: string[]) => {
    const { rows } = await cluster.pool.query<{ id: string; status: string }>(
      `SELECT id, status FROM "Run" WHERE id = ANY($1::uuid[])`,
      [runIds],
    );
    return rows;
  };

  /** Sends `count` turns (text, crop, crop in plan mode, in turn) through the one address. */
  async function sendTurns(count: number, label: string): Promise<Turn[]> {
    const turns: Turn[] = [];
    for (let i = 0; i < count; i++) {
      const kind: Kind = (['text', 'tool', 'plan'] as const)[i % 3] as Kind;
      const body =
        kind === 'text'
          ? { text: `${label}: hello number ${i}` }
          : { text: 'crop this to the left half', image_urls: [image.url], planMode: kind === 'plan' };
      const res = await send(cluster.url, account, body);
      assert.equal(res.status, 202, JSON.stringify(res));
      turns.push({ runId: res.runId as string, chatId: res.chatId as string, kind });
    }
    return turns;
  }

  /**
   * Approves each plan as it appears, through the one address, until stopped; says how many it
   * approved and how many of its requests hung.
   */
  function approveWhileRunning(turns: Turn[]): { stop(): Promise<{ approved: number; hung: number }> } {
    let running = true;
    let hung = 0;
    const approved = new Set<string>();
    const loop = (async () => {
      while (running) {
        const { rows } = await cluster.pool.query<{ id: string; runId: string }>(
          `SELECT id, "runId" FROM "Waitpoint" WHERE status = 'PENDING' AND "runId" = ANY($1::uuid[])`,
          [turns.map((t) => t.runId)],
        );
        for (const w of rows.filter((r) => !approved.has(r.id))) {
          const turn = turns.find((t) => t.runId === w.runId) as Turn;
          const status = await post(
            `${cluster.url}/api/v1/chats/${turn.chatId}/runs/${w.runId}/waitpoints/${w.id}/complete`,
            account.bearer,
            { approved: true },
          ).catch((err: Error) => {
            // A gateway killed mid-request: the next round asks again.
            if (err.name === 'TimeoutError') hung += 1;
            return 0;
          });
          if (status === 202) approved.add(w.id);
        }
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    })();
    return {
      async stop() {
        running = false;
        await loop;
        return { approved: approved.size, hung };
      },
    };
  }

  /** Every turn ended COMPLETE once: one answer, one tool call and one charge per tool turn, each event delivered once. */
  async function assertEachOnce(turns: Turn[]): Promise<{ states: string; deliveries: number }> {
    const runIds = turns.map((t) => t.runId);
    const ended = await waitFor(
      async () => {
        const rows = await statuses(runIds);
        return rows.length === runIds.length && rows.every((r) => TERMINAL.includes(r.status))
          ? rows
          : undefined;
      },
      { timeoutMs: 300_000, intervalMs: 500, what: 'every turn to end' },
    );
    const byStatus: Record<string, number> = {};
    for (const r of ended) byStatus[r.status] = (byStatus[r.status] ?? 0) + 1;
    assert.deepEqual(byStatus, { COMPLETE: runIds.length });

    const doubled = await cluster.pool.query(
      `SELECT "runId", role, count(*) FROM "Message" WHERE "runId" = ANY($1::uuid[])
        GROUP BY "runId", role HAVING count(*) > 1`,
      [runIds],
    );
    assert.deepEqual(doubled.rows, [], 'one user and one assistant message per turn');
    const answered = await cluster.pool.query<{ n: number }>(
      `SELECT count(DISTINCT "runId")::int AS n FROM "Message" WHERE role = 'assistant' AND "runId" = ANY($1::uuid[])`,
      [runIds],
    );
    assert.equal(answered.rows[0]?.n, runIds.length, 'every turn answered');
    const toolRuns = turns.filter((t) => t.kind !== 'text').map((t) => t.runId);
    const calls = await cluster.pool.query<{ runId: string; n: number }>(
      `SELECT "runId", count(*)::int AS n FROM "ToolCall" WHERE "runId" = ANY($1::uuid[]) GROUP BY "runId"`,
      [runIds],
    );
    assert.deepEqual(
      calls.rows.map((c) => c.runId).sort(),
      [...toolRuns].sort(),
      'a tool call per tool turn only',
    );
    assert.ok(
      calls.rows.every((c) => c.n === 1),
      'one tool call per tool turn',
    );
    const charges = await cluster.pool.query<{ n: number; calls: number }>(
      `SELECT count(*)::int AS n, count(DISTINCT l."toolCallId")::int AS calls
         FROM "CreditLedgerEntry" l JOIN "ToolCall" t ON t.id = l."toolCallId" WHERE t."runId" = ANY($1::uuid[])`,
      [runIds],
    );
    assert.equal(charges.rows[0]?.n, toolRuns.length, 'one charge per tool call');

    const toolCallIds = (
      await cluster.pool.query<{ id: string }>(`SELECT id FROM "ToolCall" WHERE "runId" = ANY($1::uuid[])`, [
        runIds,
      ])
    ).rows.map((r) => r.id);
    const expected = runIds.length * 2 + toolCallIds.length;
    const deliveries = await waitFor(
      async () => {
        const { rows } = await cluster.pool.query<{ id: string; status: string }>(
          `SELECT id, status FROM "WebhookDelivery" WHERE "idempotencyKey" = ANY($1::text[])`,
          [[...runIds, ...toolCallIds]],
        );
        return rows.length === expected &&
          rows.every((r) => r.status === 'DELIVERED' && receiver.received.some((p) => p.deliveryId === r.id))
          ? rows
          : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 500, what: 'every delivery to be delivered' },
    );
    assert.equal(deliveries.length, expected, 'each event recorded once');
    return { states: `${runIds.length} COMPLETE`, deliveries: deliveries.length };
  }

  async function waitForNewPid(process: ClusterProcess, old: number): Promise<number> {
    return waitFor(
      async () => {
        const pid = cluster.pidOf(process);
        return pid !== old ? pid : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 100, what: `${process} to be started again` },
    );
  }

  it('serves the contract through both gateways on one address, and the Temporal UI lists the runs', async () => {
    // Temporal's services and the workers run below the gateways' CPU priority.
    for (const p of ['gateway 1', 'gateway 2', ...BACKGROUND] as const) {
      assert.deepEqual(await priorityOf(cluster.pidOf(p)), expectedPriority(niceOf(p)), p);
    }
    const turns = await sendTurns(6, 'both gateways');
    const approvals = approveWhileRunning(turns);
    try {
      await assertEachOnce(turns);
    } finally {
      await approvals.stop();
    }
    // Each gateway answers part of the traffic: the kernel spreads new connections over both
    // (SO_REUSEPORT, by a hash of each connection's addresses). A client keeps its connections
    // open, so the turns above may all have gone over one or two: these open one each.
    for (let i = 0; i < 32; i++)
      assert.equal(await freshConnectionGet(`${cluster.url}/api/v1/chats?limit=1`, account.bearer), 200);
    const served = await Promise.all(
      cluster.metricsUrls.map(async (url) => {
        const text = await (await fetch(url)).text();
        return [...text.matchAll(/^agent_http_request_duration_seconds_count\{[^}]*\} (\d+)/gm)].reduce(
          (sum, m) => sum + Number(m[1]),
          0,
        );
      }),
    );
    console.log(`      requests answered per gateway: ${served.join(', ')}`);
    assert.ok(
      served.every((n) => n > 0),
      `both gateways answered: ${served.join(', ')}`,
    );

    // The UI server answers, and lists a run's workflow through its own API, from the cluster.
    const page = await fetch(`${cluster.uiUrl}/`);
    assert.equal(page.status, 200);
    assert.match(await page.text(), /<html/i);
    const chatId = turns[0]?.chatId as string;
    const listed = await fetch(
      `${cluster.uiUrl}/api/v1/namespaces/default/workflows?query=${encodeURIComponent(`WorkflowId = '${chatId}'`)}`,
    );
    assert.equal(listed.status, 200);
    const body = (await listed.json()) as { executions?: { execution?: { workflowId?: string } }[] };
    assert.deepEqual(
      (body.executions ?? []).map((e) => e.execution?.workflowId),
      [chatId],
    );
  });

  const victims: { name: string; process: ClusterProcess }[] = [
    { name: 'a worker', process: 'worker 1' },
    { name: 'a gateway', process: 'gateway 2' },
    { name: 'the history service', process: 'history' },
  ];
  for (const victim of victims) {
    it(`ends every turn once when ${victim.name} is SIGKILLed mid-turn`, async () => {
      const turns = await sendTurns(9, victim.name);
      const approvals = approveWhileRunning(turns);
      try {
        // Mid-turn: some turn has started and not every one has ended.
        await waitFor(
          async () => {
            const rows = await statuses(turns.map((t) => t.runId));
            return rows.some((r) => TERMINAL.includes(r.status)) &&
              !rows.every((r) => TERMINAL.includes(r.status))
              ? true
              : undefined;
          },
          { timeoutMs: 120_000, intervalMs: 50, what: 'turns in flight' },
        );
        const pid = cluster.pidOf(victim.process);
        const killedAt = Date.now();
        process.kill(pid, 'SIGKILL');
        const next = await waitForNewPid(victim.process, pid);
        const backAfter = (Date.now() - killedAt) / 1000;
        assert.ok(await liveProcess(next), `${victim.process} runs again`);
        // A process started again must not come back at the front door's priority.
        assert.deepEqual(await priorityOf(next), expectedPriority(niceOf(victim.process)), victim.process);
        const result = await assertEachOnce(turns);
        const { approved: plans, hung } = await approvals.stop();
        assert.equal(hung, 0, `requests left unanswered for ${HUNG_MS / 1000} s after the kill`);
        table.push(
          `| ${victim.name} (pid ${pid}) | ${turns.length} (${plans} plans approved) | ${backAfter.toFixed(1)} s | ${result.states} | none | ${result.deliveries}, each once |`,
        );
      } finally {
        await approvals.stop();
      }
    });
  }
});
