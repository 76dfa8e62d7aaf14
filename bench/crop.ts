/**
 * The crop row: the crop tool's blocking route against the same crop in a bare workflow on the same
 * Temporal server, started and awaited as the route does; beside both, sharp doing the crop
 * in-process, so each side's difference over the crop itself shows. The gateway and the worker run
 * as production runs them, a process each, as does the bare workflow's worker, at the same CPU
 * priority as the service's.
 */
import { randomUUID } from 'node:crypto';
import sharp from 'sharp';
import { toolCallWorkflowId } from '../workflows/tool-call.contract';
import { startBare, type BareStack } from './bare';
import { checkKey } from './bare-key';
import { startServiceProcesses, type Bench } from './context';
import { measure, measureSides, repeat, type Figures } from './measure';
import { fmt, median, spreadOf, withSpread, type Row } from './report';
import { executionStart, historyShape, timelineOf, wallClock } from './timeline';
import type { bareCropWorkflow, CropRect } from './workflows';

/** The row's line: the route within this many ms (p50) of the same crop in a bare workflow. */
const MAX_OVER_BARE_MS = 10;
const RECT = { x: 500, y: 400, width: 800, height: 600 };
const EXTRACT: CropRect = { left: RECT.x, top: RECT.y, width: RECT.width, height: RECT.height };

export async function cropRow(bench: Bench, crops: number, rounds: number): Promise<Row> {
  console.log(`bench: crop_image, ${crops} sequential with a worker, ${rounds} rounds…`);
  const service = await startServiceProcesses(bench);
  try {
    const bare = await startBare(bench.stack.temporalAddress, bench.backgroundNice);
    try {
      return await measureCrops(bench, service.url, bare, crops, rounds);
    } finally {
      await bare.stop();
    }
  } finally {
    await service.stop();
  }
}

/** A measured crop of the service: when it was sent and answered, and what the answer says. */
interface CropSample {
  sentAt: number;
  answeredAt: number;
  toolCallId: string;
  providerMs: number;
}

/** One round: the route, sharp alone and the bare workflow, each `crops` times. */
interface CropRound {
  service: Figures;
  sharp: Figures;
  bareWorkflow: Figures;
}

async function measureCrops(
  bench: Bench,
  gatewayUrl: string,
  bare: BareStack,
  crops: number,
  rounds: number,
): Promise<Row> {
  const samples: CropSample[] = [];
  let sampling = false;
  let lastCall = '';
  const crop = async () => {
    const sentAt = wallClock();
    const res = await fetch(`${gatewayUrl}/api/v1/tools/crop_image`, {
      method: 'POST',
      headers: { ...bench.user.bearer, 'content-type': 'application/json' },
      body: JSON.stringify({ image_url: bench.image.url, ...RECT }),
    });
    const body = await res.text();
    const answeredAt = wallClock();
    if (res.status !== 200) throw new Error(`crop ${res.status} ${body.slice(0, 300)}`);
    const result = JSON.parse(body) as { providerRunId: string; durationMs: number };
    // The answer names its call only in the crop's provider run id, `sharp:<toolCallId>`.
    lastCall = result.providerRunId.replace(/^sharp:/, '');
    if (sampling) samples.push({ sentAt, answeredAt, toolCallId: lastCall, providerMs: result.durationMs });
  };
  const sharpCrop = () => sharp(bench.image.jpeg).extract(EXTRACT).jpeg().toBuffer();
  await measure(crop, 5, 1);
  // The bare workflow runs the crop as the service's call did: as a local activity when the call's
  // history shows one and no activity, else as an activity.
  const shape = await historyShape(bench.temporal.client.workflow.getHandle(toolCallWorkflowId(lastCall)));
  const asLocalActivity = shape.localActivities > 0 && shape.activities === 0;
  // The key checked, as the route checks it, then the workflow started and awaited.
  const bareCrop = async () => {
    await checkKey(bench.stack.db.pool, bench.user.apiKey);
    return bench.temporal.client.workflow.execute<typeof bareCropWorkflow>('bareCropWorkflow', {
      taskQueue: bare.taskQueue,
      workflowId: `bare-crop-${randomUUID()}`,
      args: [bench.image.url, EXTRACT, asLocalActivity],
    });
  };
  await measure(sharpCrop, 5, 1);
  await measure(bareCrop, 5, 1);
  sampling = true;
  const measured: CropRound[] = await repeat(rounds, async () => {
    const [service, sharpAlone, bareWorkflow] = (await measureSides(
      [crop, sharpCrop, bareCrop],
      crops,
      1,
    )) as [Figures, Figures, Figures];
    return { service, sharp: sharpAlone, bareWorkflow };
  });
  sampling = false;
  const timeline = await cropTimeline(bench, samples);
  const overBare = spreadOf(measured.map((r) => r.service.p50 - r.bareWorkflow.p50));
  const med = (of: (r: CropRound) => Figures, q: 'p50' | 'p99') =>
    fmt(median(measured.map((r) => of(r)[q])), 2);
  const errors = measured.reduce((n, r) => n + r.service.errors, 0);
  return {
    key: 'crop',
    name: 'crop 2000x1500 → 800x600',
    measure: `p50 (p99) ms, n=${crops} ×${rounds}`,
    service: `${med((r) => r.service, 'p50')} (${med((r) => r.service, 'p99')})${errors ? `, ${errors} errors` : ''}`,
    baseline:
      `bare wf, ${asLocalActivity ? 'local activity' : 'activity'}: ${med((r) => r.bareWorkflow, 'p50')} ` +
      `(${med((r) => r.bareWorkflow, 'p99')}); sharp alone ${med((r) => r.sharp, 'p50')}`,
    ratio: `Δp50 ${withSpread(overBare, 1, ' ms')}`,
    target: `Δp50 ≤${MAX_OVER_BARE_MS} ms over the bare wf`,
    meets: overBare.median <= MAX_OVER_BARE_MS && !errors,
    data: {
      rounds: measured,
      overBareWorkflowP50Ms: overBare,
      overSharpP50Ms: spreadOf(measured.map((r) => r.service.p50 - r.sharp.p50)),
      bareWorkflowOverSharpP50Ms: spreadOf(measured.map((r) => r.bareWorkflow.p50 - r.sharp.p50)),
      bareWorkflowRunsCropAs: asLocalActivity ? 'local activity' : 'activity',
      timeline,
    },
  };
}

/**
 * Where the measured crops spent their time (see bench/README.md, crop):
 * - `toStart`: the request, the gateway's checks and Temporal's start, up to the execution's
 *   started event;
 * - `provider`: the tool's own work as the answer reports it (durationMs: fetch, sharp, storage);
 * - `rest`: the remainder: Temporal handing the call's work to the worker, the call's records, the
 *   gateway learning the outcome and its answer.
 */
async function cropTimeline(bench: Bench, samples: CropSample[]): Promise<Record<string, number>> {
  const parts = [];
  for (const s of samples) {
    const { started } = await executionStart(
      bench.temporal.client.workflow.getHandle(toolCallWorkflowId(s.toolCallId)),
      true,
    );
    parts.push({
      toStart: started - s.sentAt,
      provider: s.providerMs,
      rest: s.answeredAt - started - s.providerMs,
    });
  }
  return timelineOf("a crop's time", parts);
}
