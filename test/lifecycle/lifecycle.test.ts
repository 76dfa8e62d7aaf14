import assert from 'node:assert/strict';
import type { ProcessInfo } from '../../apps/stack/process/procfs';
import { Pool } from 'pg';
import { readiness, send, signUp, startReceiver, subscribe, type Account } from '../faults/support';
import { clusterSettings } from '../cluster/support';
import { startFakePredictionServer } from '../support/fake-providers';
import { expectedPriority, priorityOf } from '../support/priority';
import { seededRandom } from '../support/random';
import { momentTable, writeResults, type MomentRow } from '../support/reliability-results';
import { waitFor } from '../support/wait';
import {
  busyPorts,
  killTree,
  processTree,
  removeSettings,
  stackSettings,
  startReady,
  startStack,
  stillAlive,
  type Stack,
  type StackSettings,
} from './support';

const TERMINAL = new Set(['COMPLETE', 'FAILED', 'CANCELLED']);
const TERMINAL_EVENT = { COMPLETE: 'agent.completed', FAILED: 'agent.failed', CANCELLED: 'agent.failed' };
/** How many times the kill test SIGKILLs the tree; the issue's bar is 20, CI runs fewer. */
const KILLS = Number(process.env.LIFECYCLE_KILLS ?? 8);
/** Picks how many acknowledged sends each kill waits for (LIFECYCLE_SEED replays a run; it is printed). */
const SEED = Number(process.env.LIFECYCLE_SEED ?? Math.floor(Math.random() * 2 ** 31));
/** The kill test's tree: `npm start` (dev, the default) or `npm run start:cluster` (cluster). */
const ENGINE = ((engine: string): 'dev' | 'cluster' => {
  if (engine !== 'dev' && engine !== 'cluster')
    throw new Error(`LIFECYCLE_ENGINE must be dev or cluster, not "${engine}"`);
  return engine;
})(process.env.LIFECYCLE_ENGINE ?? 'dev');
/** The stack's own bound on a stop with SHUTDOWN_GRACE=10s: gateway 15 s, worker 20 s, Temporal 10 s, PostgreSQL 15 s. */
const STOP_BOUND_MS = 60_000;

/** ai_image_2 through a fake prediction provider that holds its predictions until released. */
const heldProvider = (url: string) => ({
  IMAGE_PROVIDER: 'prediction',
  PREDICTION_API_URL: url,
  PROVIDER_POLL_INTERVAL: '200ms',
});

/** Resolves once the worker polls a prediction: the tool call is in flight. */
const polled = (fake: { predictions: Map<string, { polls: number }> }) =>
  waitFor(async () => ([...fake.predictions.values()].some((p) => p.polls > 0) ? true : undefined), {
    timeoutMs: 60_000,
    what: 'the provider to be polled',
  });

const firstPrediction = async (fake: { predictions: Map<string, { canceled: boolean }> }) => {
  const [prediction] = fake.predictions.values();
  assert.ok(prediction, 'a prediction was created');
  return prediction;
};

interface RunView {
  status: string;
  toolCalls: { status: string; error: string | null }[];
}

async function runView(url: string, account: Account, turn: { chatId: string; runId: string }) {
  const res = await fetch(`${url}/api/v1/chats/${turn.chatId}/runs/${turn.runId}`, {
    headers: account.bearer,
  });
  if (res.status === 404) {
    await res.arrayBuffer();
    return undefined;
  }
  if (res.status !== 200) throw new Error(`run snapshot: ${res.status} ${await res.text()}`);
  return (await res.json()) as RunView;
}

/** The order the stop printed its steps in must be the documented one. */
function assertStopOrder(output: string): void {
  const steps = [
    /\[stack\] the gateway stopped/,
    /\[stack\] the worker stopped/,
    /\[stack\] the Temporal dev server stopped/,
    /\[stack\] PostgreSQL stopped/,
    /\[stack\] stopped$/m,
  ].map((step) => ({ step, at: output.search(step) }));
  for (const { step, at } of steps)
    assert.ok(at >= 0, `the stop never printed ${step}:\n${output.slice(-3000)}`);
  assert.deepEqual(
    steps.map((s) => s.at),
    [...steps.map((s) => s.at)].sort((a, b) => a - b),
    `stop steps out of order:\n${output.slice(-3000)}`,
  );
}

describe('npm start: crash, stop and start (the real process tree)', function () {
  const stacks: Stack[] = [];
  const folders: StackSettings[] = [];
  const settingsFor = async (env?: Record<string, string>) => {
    const settings = await stackSettings(env);
    folders.push(settings);
    return settings;
  };
  const started = async (settings: StackSettings) => {
    const stack = await startReady(settings);
    stacks.push(stack);
    return stack;
  };

  afterEach(async () => {
    for (const stack of stacks.splice(0)) if (stack.running()) await killTree(stack);
  });
  after(async () => {
    for (const settings of folders) await removeSettings(settings);
  });

  /**
   * Stops the stack with `signal` (sent to npm's pid, or to its whole group as a terminal's
   * Ctrl-C does); checks the exit, the order, that no process of the tree is left and every port
   * is free. Returns how long the stop took.
   */
  async function stopAndCheck(
    stack: Stack,
    settings: StackSettings,
    how: 'SIGTERM' | 'Ctrl-C',
    tree: ProcessInfo[],
  ): Promise<number> {
    const t0 = Date.now();
    if (how === 'SIGTERM') process.kill(stack.pid, 'SIGTERM');
    else process.kill(-stack.pid, 'SIGINT');
    const exit = await Promise.race([
      stack.exited,
      new Promise<'late'>((resolve) => setTimeout(() => resolve('late'), STOP_BOUND_MS).unref()),
    ]);
    const ms = Date.now() - t0;
    assert.notEqual(
      exit,
      'late',
      `npm start still ran ${STOP_BOUND_MS} ms after ${how}:\n${stack.output().slice(-3000)}`,
    );
    assert.deepEqual(exit, { code: 0, signal: null }, stack.output().slice(-3000));
    assertStopOrder(stack.output());
    const left = await stillAlive(tree);
    assert.deepEqual(left, [], `processes of the tree left after ${how}`);
    assert.deepEqual(await busyPorts(settings), [], `ports still held after ${how}`);
    const steps = [...stack.output().matchAll(/^\[stack\] (?:the )?(.+?) stopped \(([\d.]+) s\)$/gm)];
    console.log(
      `      ${how}: stopped in ${(ms / 1000).toFixed(1)} s (${steps.map((m) => `${m[1]} ${m[2]} s`).join(', ')}); ` +
        `${tree.length} processes, none left`,
    );
    return ms;
  }

  it(`keeps every acknowledged send through ${KILLS} SIGKILLs of the whole tree${ENGINE === 'cluster' ? ' (npm run start:cluster)' : ''}, each followed by a first start that comes up`, async () => {
    const script = ENGINE === 'cluster' ? 'start:cluster' : 'start';
    const random = seededRandom(SEED);
    console.log(`      LIFECYCLE_SEED=${SEED} LIFECYCLE_KILLS=${KILLS} LIFECYCLE_ENGINE=${ENGINE}`);
    const settings = ENGINE === 'cluster' ? (await clusterSettings()).settings : await settingsFor();
    if (ENGINE === 'cluster') folders.push(settings);
    let stack = await startReady(settings, script, 600_000);
    stacks.push(stack);
    const account = await signUp(settings.url);
    // Each POST is held a moment (up to 50 ms) before its answer, so a kill can find one open.
    const posts = { open: 0 };
    const receiver = await startReceiver({
      beforeAnswer: async () => {
        posts.open++;
        await new Promise((resolve) => setTimeout(resolve, Math.floor(random() * 50)));
        posts.open--;
      },
    });
    // The tree's own database, read at each kill for what was in flight in it.
    const pool = new Pool({
      connectionString: `postgresql://postgres:postgres@127.0.0.1:${settings.ports.postgres}/agent_chat`,
      max: 2,
      connectionTimeoutMillis: 2_000,
    });
    pool.on('error', () => undefined);
    try {
      await subscribe(settings.url, account, receiver.url);

      const acked: { chatId: string; runId: string }[] = [];
      const answers = new Map<string, number>();
      let sending = true;
      let sendsOpen = 0;
      // Senders wait here while the stack is down.
      let up: Promise<void> = Promise.resolve();
      let markUp: () => void = () => undefined;
      const sender = async (lane: number) => {
        for (let i = 0; sending; i++) {
          let answer: string;
          sendsOpen++;
          try {
            const res = await send(settings.url, account, { text: `turn ${lane}-${i}` });
            answer = String(res.status);
            if (res.status === 202) acked.push({ chatId: res.chatId as string, runId: res.runId as string });
          } catch {
            answer = 'no answer';
          } finally {
            sendsOpen--;
          }
          answers.set(answer, (answers.get(answer) ?? 0) + 1);
          if (answer !== '202') await up;
        }
      };
      const lanes = [0, 1, 2, 3].map(sender);

      let killed = 0;
      let cameUp = 0;
      const strikes: Partial<Record<string, number>>[] = [];
      for (let round = 0; round < KILLS; round++) {
        // The kill lands while sends are in flight, a seeded number of acknowledgements in.
        const target = acked.length + 2 + Math.floor(random() * 13);
        await waitFor(async () => (acked.length >= target ? true : undefined), {
          timeoutMs: 120_000,
          intervalMs: 5,
          what: `${target} acknowledged sends`,
        });
        up = new Promise((resolve) => (markUp = resolve));
        strikes.push(await inFlightIn(pool, { requests: sendsOpen, posts: posts.open }));
        killed += await killTree(stack);
        // At once, and only once: a first start that fails fails the test, with its output.
        stack = await startReady(settings, script, 600_000);
        stacks.push(stack);
        cameUp++;
        markUp();
      }
      sending = false;
      markUp();
      await Promise.all(lanes);

      // Every acknowledged send exists and ends; a 404 is a lost send, a run that never ends is stuck.
      const views = new Map<string, RunView | undefined>();
      // A run is settled once it is seen terminal, or missing (a 404 does not come back).
      const open = () => acked.filter((t) => !views.has(t.runId));
      await waitFor(
        async () => {
          for (const turn of open()) {
            const view = await runView(settings.url, account, turn);
            if (!view || TERMINAL.has(view.status)) views.set(turn.runId, view);
          }
          return open().length === 0 ? true : undefined;
        },
        { timeoutMs: 240_000, intervalMs: 1_000, what: 'every acknowledged run to end' },
      ).catch(() => undefined);
      const lost = acked.filter((t) => views.has(t.runId) && views.get(t.runId) === undefined);
      const stuck = open();

      // Each run's one terminal event, delivered (a delivery may be posted again after a kill).
      const terminalDeliveries = (runId: string) =>
        new Map(
          receiver.received
            .filter((r) => r.runId === runId && (r.event === 'agent.completed' || r.event === 'agent.failed'))
            .map((r) => [r.deliveryId, r.event]),
        );
      const ended = acked.filter((t) => views.get(t.runId));
      await waitFor(
        async () => (ended.every((t) => terminalDeliveries(t.runId).size > 0) ? true : undefined),
        { timeoutMs: 120_000, intervalMs: 500, what: 'a terminal event for every run' },
      ).catch(() => undefined);

      const states = new Map<string, number>();
      for (const t of ended) {
        const status = views.get(t.runId)?.status as string;
        states.set(status, (states.get(status) ?? 0) + 1);
      }
      const distinct = new Set(receiver.received.map((r) => r.deliveryId)).size;
      const unannounced = ended.filter((t) => terminalDeliveries(t.runId).size === 0);
      const announcedTwice = ended.filter((t) => terminalDeliveries(t.runId).size > 1);
      console.log(
        `      kills: ${KILLS} (${killed} processes), first starts that came up: ${cameUp}/${KILLS}, ` +
          `acknowledged sends: ${acked.length}, lost: ${lost.length}, stuck: ${stuck.length}, ` +
          `end states: ${JSON.stringify(Object.fromEntries(states))}, answers: ${JSON.stringify(Object.fromEntries(answers))}, ` +
          `webhook posts: ${receiver.received.length} (${receiver.received.length - distinct} posted again)`,
      );
      const moments: MomentRow[] = ['mid-request', 'mid-activity', 'mid-transaction', 'mid-POST'].map(
        (moment) => ({
          scenario: `npm ${ENGINE === 'cluster' ? 'run start:cluster' : 'start'}: the whole tree SIGKILLed`,
          moment,
          runs: acked.length,
          aimed: 0,
          hits: strikes.filter((s) => (s[moment] ?? 0) > 0).length,
          lost: lost.length + stuck.length + unannounced.length,
          doubled: announcedTwice.length,
        }),
      );
      console.log(momentTable(moments));
      const file = await writeResults(
        'lifecycle-kills',
        ENGINE,
        { LIFECYCLE_SEED: SEED, LIFECYCLE_KILLS: KILLS, LIFECYCLE_ENGINE: ENGINE },
        {
          moments,
          strikes,
          acknowledged: acked.length,
          lost: lost.length,
          stuck: stuck.length,
          states: Object.fromEntries(states),
        },
      );
      console.log(`      written to ${file}`);
      assert.ok(acked.length > KILLS * 2, `only ${acked.length} sends acknowledged`);
      assert.deepEqual(lost, [], 'acknowledged sends lost (404)');
      assert.deepEqual(stuck, [], 'acknowledged sends that never ended');
      for (const t of ended) {
        const status = views.get(t.runId)?.status as keyof typeof TERMINAL_EVENT;
        assert.deepEqual(
          [...terminalDeliveries(t.runId).values()],
          [TERMINAL_EVENT[status]],
          `run ${t.runId} (${status}): one terminal event`,
        );
      }

      const tree = await processTree(stack.pid);
      if (ENGINE === 'dev') await stopAndCheck(stack, settings, 'SIGTERM', tree);
      else {
        process.kill(stack.pid, 'SIGTERM');
        assert.deepEqual((await stack.exited).code, 0, stack.output().slice(-3000));
        assert.deepEqual(await stillAlive(tree), [], 'processes of the tree left after SIGTERM');
      }
    } finally {
      await pool.end().catch(() => undefined);
      await receiver.close();
    }
  });

  for (const how of ['SIGTERM', 'Ctrl-C'] as const) {
    it(`${how === 'SIGTERM' ? 'SIGTERM to the npm process' : 'Ctrl-C (SIGINT to the whole group)'} answers the request in flight, stops everything in order, leaves no process and frees every port`, async () => {
      const fake = await startFakePredictionServer({ held: true });
      try {
        const settings = await settingsFor(heldProvider(fake.url));
        const stack = await started(settings);
        const account = await signUp(settings.url);
        // A blocking tool call: its request is in flight at the stop, waiting on the provider.
        const inFlight = fetch(`${settings.url}/api/v1/tools/ai_image_2`, {
          method: 'POST',
          headers: { ...account.bearer, 'content-type': 'application/json' },
          body: JSON.stringify({ prompt: 'a lighthouse at dusk' }),
        });
        await polled(fake);
        const tree = await processTree(stack.pid);
        assert.ok(
          tree.some((p) => /bin\/postgres /.test(p.command)) &&
            tree.some((p) => /temporal server/.test(p.command)),
          `the tree holds PostgreSQL and Temporal: ${tree.map((p) => p.command).join('\n')}`,
        );
        const stopping = stack.waitForLine(/\[stack\] stopping/);
        const stopped = stopAndCheck(stack, settings, how, tree);
        await stopping;
        // The gateway no longer takes requests, but answers this one once its tool call ends.
        fake.release();
        const res = await inFlight;
        const body = await res.text();
        assert.equal(res.status, 200, body);
        await stopped;
      } finally {
        await fake.close();
      }
    });
  }

  it('runs the worker and the Temporal server below the gateway and PostgreSQL in CPU priority, at STACK_BACKGROUND_NICE, and refuses a value it cannot use', async () => {
    const refused = startStack(await settingsFor({ STACK_BACKGROUND_NICE: '-5' }));
    assert.equal((await refused.exited).code, 1, refused.output());
    assert.match(
      refused.output(),
      /\[stack\] failed: STACK_BACKGROUND_NICE must be a whole number from 0 to 19, not "-5"/,
    );

    const settings = await settingsFor({ STACK_BACKGROUND_NICE: '7' });
    const stack = await started(settings);
    const tree = await processTree(stack.pid);
    const find = (pattern: RegExp) => {
      const found = tree.find((p) => pattern.test(p.command));
      assert.ok(found, `no process matches ${pattern}: ${tree.map((p) => p.command).join('\n')}`);
      return found;
    };
    const background = [find(/apps\/worker\/main\.ts/), find(/temporal server start-dev/)];
    const front = [find(/apps\/gateway\/main\.ts/), find(/bin\/postgres /)];
    for (const p of background) assert.deepEqual(await priorityOf(p.pid), expectedPriority(7), p.command);
    for (const p of front) assert.deepEqual(await priorityOf(p.pid), expectedPriority(0), p.command);
    await stopAndCheck(stack, settings, 'SIGTERM', tree);
  });

  it('refuses a second stack beside a running one, naming the data folder, the ports and the processes holding them', async () => {
    const settings = await settingsFor();
    const first = await started(settings);
    const tree = await processTree(first.pid);
    const supervisor = tree.find((p) => p.command.includes('apps/stack/main.ts'));
    const postmaster = tree.find((p) => /bin\/postgres /.test(p.command));
    const gatewayProcess = tree.find((p) => p.command.includes('apps/gateway/main.ts'));
    assert.ok(supervisor && postmaster && gatewayProcess, tree.map((p) => p.command).join('\n'));

    const second = startStack(settings);
    const exit = await second.exited;
    const out = second.output();
    assert.equal(exit.code, 1, out);
    assert.ok(
      out.includes(
        `the data folder ${settings.dataDir} is in use by another npm start, pid ${supervisor.pid} (`,
      ),
      out,
    );
    assert.ok(out.includes(`port ${settings.ports.postgres} is in use by pid ${postmaster.pid} (`), out);
    assert.ok(out.includes(`port ${settings.ports.gateway} is in use by pid ${gatewayProcess.pid} (`), out);
    assert.doesNotMatch(out, /undefined/);
    // The first stack is untouched.
    assert.equal(await readiness(settings.url), 200);
    assert.deepEqual(await stillAlive([supervisor, postmaster, gatewayProcess]), [
      supervisor,
      postmaster,
      gatewayProcess,
    ]);
    await stopAndCheck(first, settings, 'SIGTERM', await processTree(first.pid));
  });

  it('finishes a tool call in flight at a graceful stop, and its run within seconds of the next start', async () => {
    const fake = await startFakePredictionServer({ held: true });
    const receiver = await startReceiver();
    try {
      const settings = await settingsFor(heldProvider(fake.url));
      let stack = await started(settings);
      const account = await signUp(settings.url);
      await subscribe(settings.url, account, receiver.url);
      const turn = await send(settings.url, account, { text: 'generate an image of a lighthouse' });
      assert.equal(turn.status, 202, JSON.stringify(turn));
      const ids = { chatId: turn.chatId as string, runId: turn.runId as string };
      await polled(fake);
      assert.equal((await runView(settings.url, account, ids))?.toolCalls[0]?.status, 'RUNNING');

      const tree = await processTree(stack.pid);
      const stopping = stack.waitForLine(/\[stack\] stopping/);
      const stopped = stopAndCheck(stack, settings, 'SIGTERM', tree);
      await stopping;
      // The provider finishes while the worker drains: the stop waits for the activity.
      fake.release();
      await stopped;

      stack = await started(settings);
      const readyAt = Date.now();
      const view = await waitFor(
        async () => {
          const v = await runView(settings.url, account, ids);
          return v && TERMINAL.has(v.status) ? v : undefined;
        },
        { timeoutMs: 120_000, intervalMs: 100, what: 'the run to end after the restart' },
      );
      const seconds = (Date.now() - readyAt) / 1000;
      console.log(`      the run ended ${seconds.toFixed(1)} s after the next start (${view.status})`);
      assert.equal(view.status, 'COMPLETE');
      assert.deepEqual(
        view.toolCalls.map((c) => c.status),
        ['SUCCEEDED'],
      );
      // A heartbeat timeout (30 s) would be the alternative; "within seconds" is well under it.
      assert.ok(seconds < 10, `the run took ${seconds} s after the start`);
      assert.equal(fake.created.length, 1, 'one prediction, paid once');
      await waitFor(
        async () =>
          receiver.received.some((r) => r.runId === ids.runId && r.event === 'agent.completed')
            ? true
            : undefined,
        { timeoutMs: 60_000, what: 'agent.completed' },
      );
      const terminal = receiver.received.filter(
        (r) => r.runId === ids.runId && (r.event === 'agent.completed' || r.event === 'agent.failed'),
      );
      assert.equal(new Set(terminal.map((r) => r.deliveryId)).size, 1, 'one terminal event');
      await stopAndCheck(stack, settings, 'SIGTERM', await processTree(stack.pid));
    } finally {
      await receiver.close();
      await fake.close();
    }
  });

  it('leaves a tool call still in flight when the stop’s grace runs out for the next start, which resumes the same provider job', async () => {
    const fake = await startFakePredictionServer({ held: true });
    try {
      const settings = await settingsFor({ ...heldProvider(fake.url), SHUTDOWN_GRACE: '1s' });
      let stack = await started(settings);
      const account = await signUp(settings.url);
      const turn = await send(settings.url, account, { text: 'generate an image of a lighthouse' });
      assert.equal(turn.status, 202, JSON.stringify(turn));
      const ids = { chatId: turn.chatId as string, runId: turn.runId as string };
      await polled(fake);

      // The provider does not finish within the grace: the worker stops with the call in flight.
      await stopAndCheck(stack, settings, 'SIGTERM', await processTree(stack.pid));
      assert.equal((await firstPrediction(fake)).canceled, false, 'the provider job is left running');

      stack = await started(settings);
      fake.release();
      const view = await waitFor(
        async () => {
          const v = await runView(settings.url, account, ids);
          return v && TERMINAL.has(v.status) ? v : undefined;
        },
        { timeoutMs: 120_000, intervalMs: 100, what: 'the run to end after the restart' },
      );
      assert.equal(view.status, 'COMPLETE', JSON.stringify(view));
      assert.deepEqual(
        view.toolCalls.map((c) => c.status),
        ['SUCCEEDED'],
      );
      assert.equal(fake.created.length, 1, 'the next attempt polled the same job, started no second one');
      await stopAndCheck(stack, settings, 'SIGTERM', await processTree(stack.pid));
    } finally {
      await fake.close();
    }
  });
});

/**
 * What a kill of the whole tree interrupted, read just before it: sends open (counted by the
 * senders), POSTs open at the receiver, and from the tree's database the statements open in it and
 * the runs and tool calls running (an activity in flight). 0 where the database does not answer.
 */
async function inFlightIn(
  pool: Pool,
  counted: { requests: number; posts: number },
): Promise<Partial<Record<string, number>>> {
  const { rows } = await pool
    .query<{ statements: number; activities: number }>(
      `SELECT (SELECT count(*)::int FROM pg_stat_activity
                WHERE datname = current_database() AND pid <> pg_backend_pid()
                  AND xact_start IS NOT NULL AND state <> 'idle') AS statements,
              (SELECT count(*)::int FROM "Run" WHERE status = 'RUNNING')
                + (SELECT count(*)::int FROM "ToolCall" WHERE status = 'RUNNING') AS activities`,
    )
    .catch(() => ({ rows: [] as { statements: number; activities: number }[] }));
  return {
    'mid-request': counted.requests,
    'mid-POST': counted.posts,
    'mid-transaction': rows[0]?.statements ?? 0,
    'mid-activity': rows[0]?.activities ?? 0,
  };
}
