/**
 * Fair share of the worker: a greedy user holding every run the cap allows is refused more with
 * 429 ACTIVE_LIMIT, and another user's turn goes through the worker meanwhile, finished while the
 * greedy user's runs are all still held.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { ModelReply } from '../../core/model/types';
import { TestLanguageModel, type TestModelRequest } from '../support/scripted-model';
import { createTestUser, type TestUser } from '../../testkit/users';
import { startGateway, type TestGateway } from '../../testkit/gateway';
import { testStack } from '../../testkit/stack';
import { waitFor } from '../support/wait';
import { startWorker, type TestWorker } from '../../testkit/worker';

const HOLD = 'hold this run';

/** Holds every step whose conversation says HOLD until released; answers the others at once. */
class HoldingModel extends TestLanguageModel {
  override readonly provider = 'holding';
  held = 0;
  private readonly gate: Promise<void>;
  private open!: () => void;

  constructor() {
    super();
    this.gate = new Promise((resolve) => (this.open = resolve));
  }

  release(): void {
    this.open();
  }

  async complete(request: TestModelRequest): Promise<ModelReply> {
    if (JSON.stringify(request.messages).includes(HOLD)) {
      this.held++;
      await Promise.race([
        this.gate,
        new Promise<never>((_, reject) =>
          request.signal.addEventListener('abort', () => reject(new Error('cancelled')), { once: true }),
        ),
      ]);
    }
    request.onText('done');
    return { text: 'done', toolCalls: [] };
  }
}

describe('fair share of the worker', function () {
  this.timeout(120_000);
  const CAP = 3;
  let gateway: TestGateway;
  let worker: TestWorker;
  let model: HoldingModel;
  let greedy: TestUser;
  let normal: TestUser;

  before(async () => {
    model = new HoldingModel();
    const config = (await testStack()).config({
      TEMPORAL_TASK_QUEUE: `fair-${randomUUID()}`,
      MAX_ACTIVE_RUNS_PER_USER: String(CAP),
    });
    worker = await startWorker({ config, model });
    gateway = await startGateway({ config });
    [greedy, normal] = await Promise.all([createTestUser(), createTestUser()]);
  });
  after(async () => {
    model?.release();
    await gateway?.close();
    await worker?.stop();
  });

  const send = (user: TestUser, text: string) =>
    fetch(`${gateway.url}/api/v1/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...user.bearer },
      body: JSON.stringify({ text }),
    });
  const status = async (user: TestUser, turn: { chatId: string; runId: string }) => {
    const res = await fetch(`${gateway.url}/api/v1/chats/${turn.chatId}/runs/${turn.runId}`, {
      headers: user.bearer,
    });
    return ((await res.json()) as { status: string }).status;
  };
  const activeRuns = async (user: TestUser) => {
    const { rows } = await (
      await testStack()
    ).db.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM "Run" WHERE "userId" = $1 AND status IN ('QUEUED', 'RUNNING', 'WAITING')`,
      [user.userId],
    );
    return rows[0]?.n;
  };

  it('refuses a user past MAX_ACTIVE_RUNS_PER_USER with 429 ACTIVE_LIMIT and serves another user meanwhile', async () => {
    // The greedy user fires twice the cap at once, each send a new chat.
    const sends = await Promise.all(Array.from({ length: 2 * CAP }, () => send(greedy, HOLD)));
    const accepted = sends.filter((r) => r.status === 202);
    const refused = sends.filter((r) => r.status === 429);
    assert.equal(accepted.length, CAP);
    assert.equal(refused.length, CAP);
    for (const res of refused) {
      assert.equal(((await res.json()) as { code: string }).code, 'ACTIVE_LIMIT');
      assert.ok(Number(res.headers.get('retry-after')) > 0, 'Retry-After is set');
    }
    assert.equal(await activeRuns(greedy), CAP, 'a refused send wrote no run');
    const chats = await (
      await testStack()
    ).db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM "Chat" WHERE "userId" = $1', [
      greedy.userId,
    ]);
    assert.equal(chats.rows[0]?.n, CAP, 'a refused send into a new chat left no empty chat');
    await waitFor(async () => (model.held === CAP ? true : undefined), { what: 'the greedy runs held' });

    // The normal user's turn runs to its end while every greedy run is still held on the worker.
    const res = await send(normal, 'hello');
    assert.equal(res.status, 202);
    const turn = (await res.json()) as { chatId: string; runId: string };
    await waitFor(async () => ((await status(normal, turn)) === 'COMPLETE' ? true : undefined), {
      what: "the normal user's run to complete",
      timeoutMs: 30_000,
    });
    assert.equal(model.held, CAP);
    assert.equal(await activeRuns(greedy), CAP, 'the greedy runs were still active');

    // A run's end gives its slot back.
    model.release();
    const turns = (await Promise.all(accepted.map((r) => r.json()))) as { chatId: string; runId: string }[];
    for (const t of turns) {
      await waitFor(async () => ((await status(greedy, t)) === 'COMPLETE' ? true : undefined), {
        what: 'a greedy run to complete',
      });
    }
    assert.equal(await activeRuns(greedy), 0);
    assert.equal((await send(greedy, 'again')).status, 202);
  });
});
