/**
 * The crop row: the crop tool's blocking route against sharp doing the same crop in-process. The
 * gateway and the worker run as production runs them, a process each, so the route's time is not
 * the sum of the gateway's, the worker's and this client's work on one event loop.
 */
import { randomUUID } from 'node:crypto';
import sharp from 'sharp';
import { toolCallWorkflowId } from '../workflows/tool-call.contract';
import { startBare, type BareStack } from './bare';
import { startServiceProcesses, type Bench } from './context';
import { measure, measurePair } from './measure';
import { fmt, type Row } from './report';
import { executionStart, timelineOf, wallClock } from './timeline';
import type { bareCropWorkflow, CropRect } from './workflows';

const MAX_DELTA_P50_MS = 30;
const RECT = { x: 500, y: 400, width: 800, height: 600 };
const EXTRACT: CropRect = { left: RECT.x, top: RECT.y, width: RECT.width, height: RECT.height };

export async function cropRow(bench: Bench, crops: number): Promise<Row> {
  console.log(`bench: crop_image, ${crops} sequential with a worker…`);
  const service = await startServiceProcesses(bench);
  try {
    const bare = await startBare(bench.stack.temporalAddress);
    try {
      return await measureCrops(bench, service.url, bare, crops);
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

async function measureCrops(bench: Bench, gatewayUrl: string, bare: BareStack, crops: number): Promise<Row> {
  const samples: CropSample[] = [];
  let sampling = false;
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
    if (sampling) {
      // The answer names its call only in the crop's provider run id, `sharp:<toolCallId>`.
      const toolCallId = result.providerRunId.replace(/^sharp:/, '');
      samples.push({ sentAt, answeredAt, toolCallId, providerMs: result.durationMs });
    }
  };
  const sharpCrop = () => sharp(bench.image.jpeg).extract(EXTRACT).jpeg().toBuffer();
  // Not a target, a reading aid: the same crop as a bare workflow's local activity, started and
  // awaited as the route does, shows how much of the difference is Temporal's own floor.
  const bareCrop = () =>
    bench.temporal.client.workflow.execute<typeof bareCropWorkflow>('bareCropWorkflow', {
      taskQueue: bare.taskQueue,
      workflowId: `bare-crop-${randomUUID()}`,
      args: [bench.image.url, EXTRACT],
    });
  await measure(crop, 5, 1);
  await measure(sharpCrop, 5, 1);
  await measure(bareCrop, 5, 1);
  sampling = true;
  const { service, baseline } = await measurePair(crop, sharpCrop, crops, 1);
  sampling = false;
  const timeline = await cropTimeline(bench, samples);
  const { service: floor } = await measurePair(bareCrop, sharpCrop, crops, 1);
  const delta = service.p50 - baseline.p50;
  const floorDelta = floor.p50 - baseline.p50;
  return {
    key: 'crop',
    name: 'crop 2000x1500 → 800x600',
    measure: `p50 (p99) ms, n=${service.n}`,
    service: `${fmt(service.p50, 2)} (${fmt(service.p99, 2)})`,
    baseline: `${fmt(baseline.p50, 2)} (${fmt(baseline.p99, 2)}); bare wf with the crop ${fmt(floor.p50, 2)} (${fmt(floor.p99, 2)})`,
    ratio: `Δp50 ${fmt(delta)} ms (bare wf: ${fmt(floorDelta)})`,
    target: `Δp50 ≤${MAX_DELTA_P50_MS} ms`,
    meets: delta <= MAX_DELTA_P50_MS && !service.errors,
    data: {
      service,
      baseline,
      deltaP50Ms: delta,
      bareWorkflow: floor,
      bareWorkflowDeltaP50Ms: floorDelta,
      timeline,
    },
  };
}

/**
 * Where the measured crops spent their time (see bench/README.md, crop):
 * - `toStart`: the request, the gateway's checks and Temporal's start, up to the execution's
 *   started event;
 * - `provider`: the tool's own work as the answer reports it (durationMs: fetch, sharp, storage);
 * - `rest`: the remainder, the offer to the workers, the first attempt's hold of the call and its
 *   two records, the gateway's read of the row and the answer.
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
