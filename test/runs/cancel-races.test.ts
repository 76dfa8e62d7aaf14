import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createLogger } from '../../core/logging/logger';
import type { ModelReply } from '../../core/model/types';
import { TestLanguageModel, type TestModelRequest } from '../support/scripted-model';
import { startReconciler } from '../../operations/runs';
import { createTestUser, type TestUser } from '../../testkit/users';
import { startGateway, type TestGateway } from '../../testkit/gateway';
import { receiverCertificate, startHttpsReceiver, type HttpsReceiver } from '../support/https-receiver';
import { memoryStream } from '../support/log-sink';
import { AGENT_WORKFLOW_TYPE } from '../../workflows/agent.contract';
import { closedAsRow, describeClose, readExecutions, tallyOf } from '../support/histories';
import { seededRandom } from '../support/random';
import { markdownTable, momentTable, writeResults, type MomentRow } from '../support/reliability-results';
import { createWebhookEndpoint } from '../support/webhooks';
import { testStack } from '../../testkit/stack';
import { waitFor } from '../support/wait';
import { startWorker, type TestWorker } from '../../testkit/worker';

/**
 * Cancel, delete, approve and reject at random moments of a turn (right after the send, during the
 * model step, during a tool, while the plan waits, during the finish), many times over, checking
 * each time what DECISIONS promises: the run ends within seconds, the chat takes the next send,
 * exactly one terminal event that matches the final status, a 202 cancel always wins, one
 * tool.completed and one charge per successful tool call, no waitpoint left PENDING, and the
 * run's Temporal execution closed as its row says (Completed, Failed, or Canceled / Failed with
 * the cancel's type), with no tool run recorded beyond its calls. The reconciler runs alongside: a
 * repair would mean the normal path failed, so none may happen.
 *
 * Each try notes the moment its cancel (or decision) met the run, read just before it was sent,
 * and the suite ends with a table per scenario and moment: tries, hits (a cancel that was taken,
 * 202), lost and doubled; it is written to test/results/ as well.
 *
 * RACE_ITERATIONS sets the tries per scenario (CI runs a few; run 200 locally), RACE_SEED
 * replays a run (the seed is printed). On the Temporal cluster:
 * `npx mocha --require tsx/cjs --require test/cluster/hooks.ts test/runs/cancel-races.test.ts`.
 */
const ITERATIONS = Number(process.env.RACE_ITERATIONS ?? 12);
const SEED = Number(process.env.RACE_SEED ?? Math.floor(Math.random() * 2 ** 31));
/**
 * The cluster suite's hooks point testkit at `npm run start:cluster`'s Temporal, in a root hook:
 * read after it ran, not when this file loads.
 */
const engine = () => (process.env.TEST_TEMPORAL_ADDRESS ? 'cluster' : 'dev');
const TERMINAL = ['COMPLETE', 'FAILED', 'CANCELLED'];
const ENDS_WITHIN_MS = 10_000;

/**
 * A model whose reply takes a random while (streaming in pieces, stopping when cancelled), so a
 * cancel can land before, during or after it: "tool" asks for an image, anything else is text.
 */
class RacingModel extends TestLanguageModel {
  override readonly provider = 'racing';
  constructor(private readonly delay: () => number) {
    super();
  }

  async complete(request: TestModelRequest): Promise<ModelReply> {
    const last = request.messages[request.messages.length - 1];
    const wantsTool = last?.role === 'user' && /\btool\b/.test(last.text);
    const reply: ModelReply = wantsTool
      ? {
          text: 'Drawing.',
          toolCalls: [{ id: 'c1', toolName: 'ai_image_2', input: { prompt: 'a lighthouse' } }],
        }
      : { text: 'Here is my answer, in a few pieces.', toolCalls: [] };
    for (const piece of reply.text.match(/.{1,8}/g) ?? []) {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(resolve, this.delay());
        request.signal.addEventListener('abort', () => {
          clearTimeout(timer);
          reject(new Error('cancelled'));
        });
      });
      request.onText(piece);
    }
    return reply;
  }
}

interface Snapshot {
  status: string;
  toolCalls: { id: string; status: string }[];
  waitpoints: { id: string; status: string }[];
}

interface Outcome {
  scenario: string;
  /** Where the run was when the cancel (or the decisions) went out. */
  moment: string;
  status: string;
  cancel?: number;
  decisions?: number[];
  problems: Problems;
}

/** What a try found broken: something missing, something there twice, or a promise otherwise broken. */
interface Problems {
  lost: string[];
  doubled: string[];
  broken: string[];
}

const noProblems = (): Problems => ({ lost: [], doubled: [], broken: [] });

describe('cancel, delete and decide at any moment', function () {
  this.timeout(30 * 60_000);
  const random = seededRandom(SEED);
  let gateway: TestGateway;
  let worker: TestWorker;
  let receiver: HttpsReceiver;
  let reconciler: ReturnType<typeof startReconciler>;
  // The reconciler's log: each repair names its run. The database is shared with every other
  // suite of the run, whose leftover runs this reconciler may repair too; only ours count.
  const reconcilerLog = memoryStream();
  const userIds: string[] = [];
  const outcomes: Outcome[] = [];

  before(async () => {
    process.stdout.write(
      `      seed ${SEED}, ${ITERATIONS} tries per scenario (RACE_SEED, RACE_ITERATIONS)\n`,
    );
    const { caFile } = await receiverCertificate();
    const config = (await testStack()).config({
      TEMPORAL_TASK_QUEUE: `races-${randomUUID()}`,
      OUTBOUND_CA_FILE: caFile,
      IMAGE_PROVIDER: 'local-preview',
      SEND_RATE_LIMIT_PER_MINUTE: '100000',
      API_RATE_LIMIT_PER_MINUTE: '1000000',
    });
    worker = await startWorker({ config, model: new RacingModel(() => Math.floor(random() * 40)) });
    gateway = await startGateway({ config });
    receiver = await startHttpsReceiver();
    const logger = createLogger({ level: 'error', name: 'reconciler' }, reconcilerLog.stream);
    reconciler = startReconciler({ ...gateway.deps, logger }, 1_000);
  });
  after(async () => {
    await reconciler?.stop();
    await receiver?.close();
    await gateway?.close();
    await worker?.stop();
    const table = new Map<string, Map<string, number>>();
    for (const o of outcomes) {
      const row = table.get(o.scenario) ?? new Map<string, number>();
      const key = `${o.status}${o.cancel ? ` (cancel ${o.cancel})` : ''}${o.decisions ? ` (${o.decisions.join('/')})` : ''}`;
      row.set(key, (row.get(key) ?? 0) + 1);
      table.set(o.scenario, row);
    }
    for (const [scenario, row] of table)
      process.stdout.write(`      ${scenario}: ${[...row].map(([k, n]) => `${n}× ${k}`).join(', ')}\n`);
    if (outcomes.length === 0) return;
    const moments = momentRowsOf(outcomes);
    process.stdout.write(`${momentTable(moments)}\n`);
    const broken = outcomes.filter((o) => o.problems.broken.length);
    if (broken.length)
      process.stdout.write(
        `${markdownTable(
          ['scenario', 'moment', 'promise broken'],
          broken.flatMap((o) => o.problems.broken.map((p) => [o.scenario, o.moment, p])),
        )}\n`,
      );
    const file = await writeResults(
      'cancel-races',
      engine(),
      { RACE_SEED: SEED, RACE_ITERATIONS: ITERATIONS },
      { moments, outcomes },
    );
    process.stdout.write(`      written to ${file}\n`);
  });

  async function subscribedUser(): Promise<TestUser> {
    const user = await createTestUser();
    userIds.push(user.userId);
    await createWebhookEndpoint(gateway.url, user, receiver.url, [
      'agent.started',
      'agent.completed',
      'agent.failed',
      'tool.completed',
    ]);
    return user;
  }

  const call = (user: TestUser, method: string, path: string, body?: unknown) =>
    fetch(`${gateway.url}${path}`, {
      method,
      headers: { 'content-type': 'application/json', ...user.bearer },
      body: body === undefined ? undefined : JSON.stringify(body),
    });

  async function send(user: TestUser, body: object): Promise<{ chatId: string; runId: string }> {
    const res = await call(user, 'POST', '/api/v1/completions', body);
    assert.equal(res.status, 202, await res.clone().text());
    return (await res.json()) as { chatId: string; runId: string };
  }

  const runPath = (t: { chatId: string; runId: string }) => `/api/v1/chats/${t.chatId}/runs/${t.runId}`;
  const pause = (maxMs: number) =>
    new Promise((resolve) => setTimeout(resolve, Math.floor(random() * maxMs)));

  /** The run's row as the tables hold it, whether or not its chat is deleted. */
  async function row(runId: string): Promise<Snapshot> {
    const { db } = await testStack();
    const { rows } = await db.pool.query<Snapshot>(
      `SELECT r.status::text AS status,
              COALESCE((SELECT jsonb_agg(jsonb_build_object('id', t.id, 'status', t.status)) FROM "ToolCall" t
                         WHERE t."runId" = r.id), '[]') AS "toolCalls",
              COALESCE((SELECT jsonb_agg(jsonb_build_object('id', w.id, 'status', w.status)) FROM "Waitpoint" w
                         WHERE w."runId" = r.id), '[]') AS waitpoints
         FROM "Run" r WHERE r.id = $1`,
      [runId],
    );
    assert.ok(rows[0], 'the run exists');
    return rows[0];
  }

  async function ended(runId: string): Promise<Snapshot> {
    return waitFor(
      async () => {
        const r = await row(runId);
        return TERMINAL.includes(r.status) ? r : undefined;
      },
      { timeoutMs: ENDS_WITHIN_MS, what: `run ${runId} to end` },
    );
  }

  /** The events the receiver got for this run, once every delivery of it has settled. */
  async function eventsOf(
    runId: string,
    toolCallIds: string[],
  ): Promise<{ event: string; status?: string }[]> {
    const { db } = await testStack();
    await waitFor(
      async () => {
        const { rows } = await db.pool.query<{ pending: number }>(
          `SELECT count(*)::int AS pending FROM "WebhookDelivery"
            WHERE "idempotencyKey" = ANY($1) AND status <> 'DELIVERED'`,
          [[runId, ...toolCallIds]],
        );
        return rows[0]?.pending === 0 ? true : undefined;
      },
      { what: 'the run’s deliveries' },
    );
    const keys = new Set([runId, ...toolCallIds]);
    return receiver.requests
      .map(
        (r) =>
          JSON.parse(r.rawBody.toString('utf8')) as {
            event: string;
            data: { runId?: string; toolCallId?: string; status?: string };
          },
      )
      .filter(
        (e) =>
          keys.has(e.data.runId ?? '') && (e.event !== 'tool.completed' || keys.has(e.data.toolCallId ?? '')),
      )
      .map((e) => ({ event: e.event, status: e.data.status }));
  }

  /** Where the run is now: the moment a cancel or a decision sent next meets. */
  async function momentOf(runId: string): Promise<string> {
    const { db } = await testStack();
    const { rows } = await db.pool.query<{ status: string; streaming: boolean; tool: boolean }>(
      `SELECT r.status::text AS status, r.text <> '' AS streaming,
              EXISTS (SELECT 1 FROM "ToolCall" t WHERE t."runId" = r.id AND t.status = 'RUNNING') AS tool
         FROM "Run" r WHERE r.id = $1`,
      [runId],
    );
    const r = rows[0];
    if (!r) return 'not admitted';
    if (TERMINAL.includes(r.status)) return 'after its end';
    if (r.status === 'QUEUED') return 'queued';
    if (r.status === 'WAITING') return 'plan waiting';
    if (r.tool) return 'mid-tool';
    return r.streaming ? 'mid-model-step' : 'step starting';
  }

  /**
   * Every promise about how a run ends, checked from the tables, the receiver and the run's Temporal
   * execution; what is broken is answered, not thrown, so the table counts every try.
   */
  async function checkEnding(
    runId: string,
    expect: { cancelWon?: boolean; deleted?: boolean },
  ): Promise<{ status: string; problems: Problems }> {
    const problems = noProblems();
    const r = await ended(runId).catch(() => undefined);
    if (!r) {
      problems.lost.push(`run ${runId} did not end within ${ENDS_WITHIN_MS} ms`);
      return { status: (await row(runId)).status, problems };
    }
    if ((expect.cancelWon || expect.deleted) && r.status !== 'CANCELLED')
      problems.broken.push(`run ${runId}: a 202 cancel did not win, it ended ${r.status}`);
    const pending = r.waitpoints.filter((w) => w.status === 'PENDING');
    if (pending.length)
      problems.broken.push(`run ${runId}: waitpoint left PENDING: ${JSON.stringify(pending)}`);
    if (r.status === 'CANCELLED' && r.waitpoints.some((w) => w.status === 'EXPIRED'))
      problems.broken.push(`run ${runId}: a cancelled plan is EXPIRED, not CANCELLED`);
    const succeeded = r.toolCalls.filter((t) => t.status === 'SUCCEEDED').map((t) => t.id);
    const events = await eventsOf(
      runId,
      r.toolCalls.map((t) => t.id),
    ).catch((err: Error) => {
      problems.lost.push(`run ${runId}: ${err.message}`);
      return [];
    });
    const terminal = events.filter((e) => e.event === 'agent.completed' || e.event === 'agent.failed');
    if (terminal.length === 0) problems.lost.push(`run ${runId}: no terminal event`);
    if (terminal.length > 1) problems.doubled.push(`run ${runId}: ${terminal.length} terminal events`);
    const expected = {
      event: r.status === 'COMPLETE' ? 'agent.completed' : 'agent.failed',
      status: r.status,
    };
    if (terminal.length === 1 && JSON.stringify(terminal[0]) !== JSON.stringify(expected))
      problems.broken.push(`run ${runId} is ${r.status}, its terminal event ${JSON.stringify(terminal[0])}`);
    const completed = events.filter((e) => e.event === 'tool.completed').length;
    if (completed < succeeded.length)
      problems.lost.push(`run ${runId}: ${completed} tool.completed for ${succeeded.length} successes`);
    if (completed > succeeded.length)
      problems.doubled.push(`run ${runId}: ${completed} tool.completed for ${succeeded.length} successes`);
    const { db } = await testStack();
    const charges = await db.pool.query<{ toolCallId: string }>(
      `SELECT "toolCallId" FROM "CreditLedgerEntry" WHERE "toolCallId" = ANY($1::uuid[])`,
      [r.toolCalls.map((t) => t.id)],
    );
    const charged = charges.rows.map((c) => c.toolCallId);
    for (const id of succeeded) if (!charged.includes(id)) problems.lost.push(`tool call ${id}: not charged`);
    for (const id of new Set(charged)) {
      const n = charged.filter((c) => c === id).length;
      if (n > 1 || !succeeded.includes(id))
        problems.doubled.push(
          `tool call ${id}: charged ${n} time(s), ${succeeded.includes(id) ? 'succeeded' : 'did not succeed'}`,
        );
    }
    await checkExecution(runId, r, problems);
    return { status: r.status, problems };
  }

  /** The run's Temporal execution closed as its row says, and ran no tool beyond its calls. */
  async function checkExecution(runId: string, r: Snapshot, problems: Problems): Promise<void> {
    const { temporal } = await testStack();
    // A run cancelled before its workflow started may have none; a run that did work has one.
    const needed = r.status === 'CANCELLED' ? 0 : 1;
    // Its deliveries' executions carry its id too.
    const query = `WorkflowType = '${AGENT_WORKFLOW_TYPE}' AND AgentRunId = '${runId}'`;
    const executions = await readExecutions(temporal.client, query, {
      timeoutMs: 30_000,
      atLeast: needed,
    }).catch((err: Error) => {
      problems.broken.push(`run ${runId}: ${err.message}`);
      return undefined;
    });
    if (!executions) return;
    if (executions.length < needed) problems.lost.push(`run ${runId} is ${r.status}, and has no execution`);
    if (executions.length > 1) problems.doubled.push(`run ${runId}: ${executions.length} executions`);
    for (const e of executions) {
      if (!closedAsRow(e, r.status))
        problems.broken.push(`run ${runId} is ${r.status}, its execution closed ${describeClose(e)}`);
      const ran = tallyOf(e, 'runTool').results.length;
      if (ran > r.toolCalls.length)
        problems.doubled.push(`run ${runId}: ${ran} tool runs recorded for ${r.toolCalls.length} call(s)`);
    }
  }

  /** The chat takes its next send: nothing is left active in it. */
  async function nextSendAccepted(user: TestUser, chatId: string, problems: Problems): Promise<void> {
    const res = await call(user, 'POST', '/api/v1/completions', { text: 'and again', chatId });
    if (res.status !== 202) {
      problems.broken.push(`the next send into chat ${chatId}: ${res.status} ${await res.text()}`);
      return;
    }
    const next = (await res.json()) as { runId: string };
    const after = (await checkEnding(next.runId, {})).problems;
    for (const kind of ['lost', 'doubled', 'broken'] as const)
      problems[kind].push(...after[kind].map((p) => `the next send: ${p}`));
  }

  /** Every try of the scenario kept every promise (each try's problems, named, fail it). */
  function assertKept(scenario: string): void {
    const mine = outcomes.filter((o) => o.scenario === scenario);
    for (const kind of ['lost', 'doubled', 'broken'] as const)
      assert.deepEqual(
        mine.flatMap((o) => o.problems[kind].map((p) => `${o.moment}: ${p}`)),
        [],
        `${kind} (seed ${SEED})`,
      );
  }

  async function cancelRace(scenario: string, body: object, maxDelayMs: number) {
    const user = await subscribedUser();
    for (let i = 0; i < ITERATIONS; i++) {
      const turn = await send(user, body);
      await pause(maxDelayMs);
      const moment = await momentOf(turn.runId);
      const res = await call(user, 'POST', `${runPath(turn)}/cancel`);
      assert.ok([202, 409].includes(res.status), `cancel answered ${res.status}`);
      if (res.status === 409) assert.equal(((await res.json()) as { code: string }).code, 'RUN_NOT_ACTIVE');
      const { status, problems } = await checkEnding(turn.runId, { cancelWon: res.status === 202 });
      await nextSendAccepted(user, turn.chatId, problems);
      outcomes.push({ scenario, moment, status, cancel: res.status, problems });
    }
    assertKept(scenario);
  }

  it('cancel right after the send', () => cancelRace('cancel at once', { text: 'hello' }, 0));
  it('cancel during the model step or its finish', () =>
    cancelRace('cancel mid-turn', { text: 'hello' }, 150));
  it('cancel during a tool call', () => cancelRace('cancel mid-tool', { text: 'use a tool' }, 400));

  it('delete the chat at any moment of a turn, or while a send into it is admitted', async () => {
    const user = await subscribedUser();
    for (let i = 0; i < ITERATIONS; i++) {
      let runId: string | undefined;
      let chatId: string;
      let moment = 'send racing the delete';
      if (i % 2 === 0) {
        const turn = await send(user, { text: 'use a tool' });
        ({ chatId, runId } = turn);
        await pause(300);
        moment = await momentOf(runId);
        assert.equal((await call(user, 'DELETE', `/api/v1/chats/${chatId}`)).status, 204);
      } else {
        chatId = (await send(user, { text: 'first' })).chatId;
        await waitFor(async () => ((await activeRuns(chatId)) === 0 ? true : undefined), {
          what: 'the first turn',
        });
        const [sent, deleted] = await Promise.all([
          call(user, 'POST', '/api/v1/completions', { text: 'use a tool', chatId }),
          pause(20).then(() => call(user, 'DELETE', `/api/v1/chats/${chatId}`)),
        ]);
        assert.equal(deleted.status, 204);
        assert.ok([202, 404].includes(sent.status), `the racing send answered ${sent.status}`);
        if (sent.status === 202) runId = ((await sent.json()) as { runId: string }).runId;
      }
      let problems = noProblems();
      let status = 'not admitted';
      if (runId) ({ status, problems } = await checkEnding(runId, {}));
      if ((await activeRuns(chatId)) !== 0)
        problems.broken.push(`a run of deleted chat ${chatId} stays active`);
      const again = await call(user, 'POST', '/api/v1/completions', { text: 'hi', chatId });
      if (again.status !== 404) problems.broken.push(`a deleted chat took a send: ${again.status}`);
      outcomes.push({ scenario: 'delete', moment, status, problems });
    }
    assertKept('delete');
  });

  async function activeRuns(chatId: string): Promise<number> {
    const { db } = await testStack();
    const { rows } = await db.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM "Run" WHERE "chatId" = $1 AND status IN ('QUEUED', 'RUNNING', 'WAITING')`,
      [chatId],
    );
    return rows[0]?.n ?? 0;
  }

  it('approve, reject and cancel racing each other on a waiting plan', async () => {
    const user = await subscribedUser();
    for (let i = 0; i < ITERATIONS; i++) {
      const turn = await send(user, { text: 'use a tool', planMode: true });
      const waitpointId = await waitFor(async () => {
        const r = await row(turn.runId);
        if (TERMINAL.includes(r.status)) throw new Error(`the plan ended ${r.status} before it waited`);
        return r.waitpoints.find((w) => w.status === 'PENDING')?.id;
      });
      const decide = (approved: boolean) =>
        call(user, 'POST', `${runPath(turn)}/waitpoints/${waitpointId}/complete`, { approved }).then(
          (r) => r.status,
        );
      const moves = [
        () => decide(true),
        () => decide(false),
        () => call(user, 'POST', `${runPath(turn)}/cancel`).then((r) => r.status),
      ];
      // Two or three of them at once, in a random order with random gaps.
      const chosen = moves.filter(() => random() < 0.7);
      if (chosen.length < 2) chosen.push(moves[2]!);
      const moment = await momentOf(turn.runId);
      const answers = await Promise.all(chosen.map(async (move) => (await pause(50), move())));
      const cancelAnswer = chosen.includes(moves[2]!) ? answers[chosen.indexOf(moves[2]!)] : undefined;
      const decisionAnswers = answers.filter((_, k) => chosen[k] !== moves[2]);
      const { status, problems } = await checkEnding(turn.runId, { cancelWon: cancelAnswer === 202 });
      if (decisionAnswers.filter((s) => s === 202).length > 1)
        problems.doubled.push(`run ${turn.runId}: two decisions won (${decisionAnswers.join('/')})`);
      const r = await row(turn.runId);
      if (cancelAnswer !== 202 && decisionAnswers.includes(202)) {
        const decided = r.waitpoints[0]?.status;
        if (decided !== 'APPROVED' && decided !== 'REJECTED') problems.broken.push(`decided: ${decided}`);
        else if (status !== (decided === 'APPROVED' ? 'COMPLETE' : 'CANCELLED'))
          problems.broken.push(`the plan was ${decided}, the run ended ${status}`);
      }
      await nextSendAccepted(user, turn.chatId, problems);
      outcomes.push({
        scenario: 'plan races',
        moment,
        status,
        cancel: cancelAnswer,
        decisions: decisionAnswers,
        problems,
      });
    }
    assertKept('plan races');
  });

  it('needed no repair by the reconciler', async () => {
    await reconciler.pass();
    const { rows } = await gateway.deps.db.pool.query<{ id: string }>(
      `SELECT id FROM "Run" WHERE "userId" = ANY($1::uuid[])`,
      [userIds],
    );
    const ours = new Set(rows.map((r) => r.id));
    assert.ok(ours.size > 0);
    const repaired = reconcilerLog
      .text()
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { msg: string; runId?: string })
      .filter((line) => line.msg.startsWith('reconciler ended a run') && ours.has(line.runId ?? ''));
    assert.deepEqual(repaired, [], 'the reconciler repaired a run: the normal path failed');
  });
});

/** One row per scenario and moment: tries there, those whose cancel or decision was taken, what broke. */
function momentRowsOf(outcomes: Outcome[]): MomentRow[] {
  const rows = new Map<string, MomentRow>();
  for (const o of outcomes) {
    const key = `${o.scenario}\u0000${o.moment}`;
    const row = rows.get(key) ?? {
      scenario: o.scenario,
      moment: o.moment,
      runs: 0,
      aimed: 0,
      hits: 0,
      lost: 0,
      doubled: 0,
    };
    row.runs++;
    row.aimed++;
    if (
      o.cancel === 202 ||
      o.decisions?.includes(202) ||
      (o.scenario === 'delete' && o.status === 'CANCELLED')
    )
      row.hits++;
    row.lost += o.problems.lost.length;
    row.doubled += o.problems.doubled.length;
    rows.set(key, row);
  }
  return [...rows.values()].sort(
    (a, b) => a.scenario.localeCompare(b.scenario) || a.moment.localeCompare(b.moment),
  );
}
