/** The crop row: the crop tool's blocking route against sharp doing the same crop in-process. */
import sharp from 'sharp';
import type { Bench } from './context';
import { measure, measurePair } from './measure';
import { fmt, type Row } from './report';

const MAX_DELTA_P50_MS = 30;
const RECT = { x: 500, y: 400, width: 800, height: 600 };

export async function cropRow(bench: Bench, crops: number): Promise<Row> {
  console.log(`bench: crop_image, ${crops} sequential with a worker…`);
  const { gateway } = await bench.inProcess();
  const crop = async () => {
    const res = await fetch(`${gateway.url}/api/v1/tools/crop_image`, {
      method: 'POST',
      headers: { ...bench.user.bearer, 'content-type': 'application/json' },
      body: JSON.stringify({ image_url: bench.image.url, ...RECT }),
    });
    const body = await res.text();
    if (res.status !== 200) throw new Error(`crop ${res.status} ${body.slice(0, 300)}`);
  };
  const sharpCrop = () =>
    sharp(bench.image.jpeg)
      .extract({ left: RECT.x, top: RECT.y, width: RECT.width, height: RECT.height })
      .jpeg()
      .toBuffer();
  await measure(crop, 5, 1);
  await measure(sharpCrop, 5, 1);
  const { service, baseline } = await measurePair(crop, sharpCrop, crops, 1);
  const delta = service.p50 - baseline.p50;
  return {
    key: 'crop',
    name: 'crop 2000x1500 → 800x600',
    measure: `p50 (p99) ms, n=${service.n}`,
    service: `${fmt(service.p50, 2)} (${fmt(service.p99, 2)})`,
    baseline: `${fmt(baseline.p50, 2)} (${fmt(baseline.p99, 2)})`,
    ratio: `Δp50 ${fmt(delta)} ms`,
    target: `Δp50 ≤${MAX_DELTA_P50_MS} ms`,
    meets: delta <= MAX_DELTA_P50_MS && !service.errors,
    data: { service, baseline, deltaP50Ms: delta },
  };
}
