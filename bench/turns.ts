/**
 * The rows of single turns on the gateway and worker processes: the shape of a turn's history
 * (plain, tool, plan mode), and the end-to-end turn up to its webhook.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { agentWorkflowId } from '../workflows/agent.contract';
import { webhookDeliveryWorkflowId } from '../workflows/webhook-delivery.contract';
import { createTestUser } from '../testkit/users';
import type { BareStack } from './bare';
import { checkKey } from './bare-key';
import { isTerminal, type SentTurn, type ServiceClient } from './client';
import type { Bench, ServiceProcesses } from './context';
import { measure, measurePair, repeat } from './measure';
import { latencyRow, spreadOf, withSpread, type Row } from './report';
import { executionStart, historyShape, timelineOf, wallClock, type HistoryShape } from './timeline';
import type { bareNotifyWorkflow, bareStepsWorkflow } from './workflows';

const POLL_MS = 20;
const MAX_PLAIN_EVENTS = 15;
const MAX_PLAIN_WORKFLOW_TASKS = 3;
const MAX_E2E_RATIO = 1.3;

/** A run's terminal event as it reached the receiver. */
interface Arrival {
  event: string;
  /** the envelope's id, which is its delivery's workflow id */
  envelopeId: string;
  /** when its request ended, on the wall clock */
  at: number;
}

interface Receiver {
  url: string;
  server: Server;
  /** Resolves when agent.completed (or agent.failed) for the run arrives. */
  completion(runId: string): Promise<Arrival>;
}

async function webhookReceiver(): Promise<Receiver> {
  const waiting = new Map<string, (arrival: Arrival) => void>();
  const early = new Map<string, Arrival>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = wallClock();
      res.writeHead(204).end();
      const envelope = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        id: string;
        event: string;
        data: { runId?: string };
      };
      const runId = envelope.data.runId;
      if (!runId || (envelope.event !== 'agent.completed' && envelope.event !== 'agent.failed')) return;
      const arrival = { event: envelope.event, envelopeId: envelope.id, at };
      const resolve = waiting.get(runId);
      if (resolve) {
        waiting.delete(runId);
        resolve(arrival);
      } else early.set(runId, arrival);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    server,
    completion(runId) {
      const arrival = early.get(runId);
      if (arrival) {
        early.delete(runId);
        return Promise.resolve(arrival);
      }
      return new Promise((resolve) => waiting.set(runId, resolve));
    },
  };
}

/**
 * Each kind of turn (plain, tool, plan mode) run to its end `rounds` times; rows of their histories
 * against a bare workflow of as many activities as the turn ran steps.
 */
export async function historyRows(
  bench: Bench,
  service: ServiceProcesses,
  bare: BareStack,
  rounds: number,
): Promise<Row[]> {
  console.log(`bench: history of a plain, a tool and a plan-mode turn, ${rounds} of each…`);
  const client = service.client(bench.user);
  const { workflow } = bench.temporal.client;
  const crop = { text: 'crop this to the left half', image_urls: [bench.image.url] };
  const ended = async (turn: SentTurn) => {
    const { snapshot } = await client.pollUntil(turn, isTerminal, POLL_MS);
    if (snapshot.status !== 'COMPLETE')
      throw new Error(`turn ${turn.runId} ended ${snapshot.status}: ${snapshot.error}`);
    return historyShape(workflow.getHandle(agentWorkflowId(turn.chatId), turn.triggerRunId ?? undefined));
  };
  const planned = async () => {
    const turn = await client.send({ ...crop, planMode: true });
    await client.approvePlan(turn, POLL_MS);
    return ended(turn);
  };
  const bareShapes = new Map<number, Promise<HistoryShape>>();
  const bareShape = (activities: number) => {
    let shape = bareShapes.get(activities);
    if (!shape) {
      const workflowId = `bare-history-${randomUUID()}`;
      shape = workflow
        .execute<typeof bareStepsWorkflow>('bareStepsWorkflow', {
          taskQueue: bare.taskQueue,
          workflowId,
          args: [activities],
        })
        .then(() => historyShape(workflow.getHandle(workflowId)));
      bareShapes.set(activities, shape);
    }
    return shape;
  };

  const kinds = [
    ['history plain', () => client.send({ text: 'hello bench' }).then(ended)],
    ['history tool (crop)', () => client.send(crop).then(ended)],
    ['history plan mode (crop)', planned],
  ] as const;
  const rows: Row[] = [];
  for (const [name, run] of kinds) {
    const turns = await repeat(rounds, run);
    // The floor runs each of the turn's steps (model steps and tool calls, whether the turn runs
    // them as activities or local activities) as an activity.
    const floors = await Promise.all(turns.map((t) => bareShape(t.activities + t.localActivities)));
    const events = spreadOf(turns.map((t) => t.events));
    const tasks = spreadOf(turns.map((t) => t.workflowTasks));
    const ratio = spreadOf(turns.map((t, i) => t.events / (floors[i] as HistoryShape).events));
    const last = turns.at(-1) as HistoryShape;
    const floor = floors.at(-1) as HistoryShape;
    const plain = name === 'history plain';
    rows.push({
      key: 'history',
      name,
      measure: `events, workflow tasks ×${rounds}`,
      service: `${withSpread(events, 0, ' events')}, ${withSpread(tasks, 0, ' tasks')}; ${last.activities} act., ${last.localActivities} local, ${last.patches} patch, ${last.signals} signals`,
      baseline: `${floor.events} (${floor.workflowTasks}); ${floor.activities} act.`,
      ratio: withSpread(ratio),
      target: plain ? `≤${MAX_PLAIN_EVENTS} events, ≤${MAX_PLAIN_WORKFLOW_TASKS} tasks` : '-',
      meets: plain
        ? events.median <= MAX_PLAIN_EVENTS && tasks.median <= MAX_PLAIN_WORKFLOW_TASKS
        : undefined,
      data: { service: turns, baseline: floors, events, workflowTasks: tasks },
    });
  }
  return rows;
}

/**
 * Send → agent.completed at a loopback webhook receiver, against a bare workflow of one no-op
 * activity followed by one activity POSTing the same event to the same receiver.
 */
export async function endToEndRow(
  bench: Bench,
  service: ServiceProcesses,
  bare: BareStack,
  turns: number,
  rounds: number,
): Promise<Row> {
  console.log(`bench: end-to-end turn, ${turns} sequential, ${rounds} rounds…`);
  const receiver = await webhookReceiver();
  try {
    // A user of its own: its endpoint must not make the other rows' turns pay for deliveries.
    const user = await createTestUser();
    const client: ServiceClient = service.client(user);
    await client.addWebhook(receiver.url, ['agent.completed', 'agent.failed']);
    const samples: TurnSample[] = [];
    const envelopes: string[] = [];
    let sampling = false;
    const turn = async () => {
      const sentAt = wallClock();
      const sent = await client.send({ text: 'hello bench' });
      const arrival = await receiver.completion(sent.runId);
      if (arrival.event !== 'agent.completed') throw new Error(`run ${sent.runId}: ${arrival.event}`);
      envelopes.push(arrival.envelopeId);
      if (sampling) samples.push({ sentAt, sent, arrival });
    };
    // The key checked, as the send checks it, then the workflow started.
    const bareTurn = async () => {
      const id = randomUUID();
      const arrived = receiver.completion(id);
      await checkKey(bench.stack.db.pool, user.apiKey);
      await bench.temporal.client.workflow.start<typeof bareNotifyWorkflow>('bareNotifyWorkflow', {
        taskQueue: bare.taskQueue,
        workflowId: `bare-turn-${id}`,
        args: [receiver.url, JSON.stringify({ event: 'agent.completed', data: { runId: id } })],
      });
      await arrived;
    };
    await measure(turn, 10, 1);
    await measure(bareTurn, 10, 1);
    sampling = true;
    const measured = await repeat(rounds, () => measurePair(turn, bareTurn, turns, 1));
    sampling = false;
    const timeline = await turnTimeline(bench, samples);
    // Every delivery's workflow to its end: that work is the service's, and must not land in a
    // later row's window.
    await Promise.all(
      envelopes.map((id) =>
        bench.temporal.client.workflow.getHandle(webhookDeliveryWorkflowId(id, 1)).result(),
      ),
    );
    return latencyRow('e2e', 'end-to-end turn', measured, { p50: MAX_E2E_RATIO }, { timeline });
  } finally {
    receiver.server.closeAllConnections();
    receiver.server.close();
  }
}

/** A measured end-to-end turn: when it was sent, the send's answer, and its event's arrival. */
interface TurnSample {
  sentAt: number;
  sent: SentTurn;
  arrival: Arrival;
}

/**
 * Where the measured end-to-end turns spent their time (see bench/README.md, e2e):
 * - `toStart`: the send (HTTP, the key check, the durable admission) and Temporal's start, up to
 *   the run's execution's started event;
 * - `dispatch`: to its workflow task's start, Temporal handing the task to a worker;
 * - `run`: to the delivery's execution's started event: the worker's activation of the run, its
 *   step (the model, the run's end and its event recorded) and the delivery's start;
 * - `delivery`: to the receiver's answer: the delivery's execution handing its POST to a worker,
 *   and the POST.
 */
async function turnTimeline(bench: Bench, samples: TurnSample[]): Promise<Record<string, number>> {
  const { workflow } = bench.temporal.client;
  const parts = [];
  for (const { sentAt, sent, arrival } of samples) {
    const run = await executionStart(
      workflow.getHandle(agentWorkflowId(sent.chatId), sent.triggerRunId ?? undefined),
    );
    const delivery = await executionStart(
      workflow.getHandle(webhookDeliveryWorkflowId(arrival.envelopeId, 1)),
      true,
    );
    parts.push({
      toStart: run.started - sentAt,
      dispatch: run.taskStarted - run.started,
      run: delivery.started - run.taskStarted,
      delivery: arrival.at - delivery.started,
    });
  }
  return timelineOf("an end-to-end turn's time", parts);
}
