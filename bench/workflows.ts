/** The bare baselines: the least a turn can be as a Temporal workflow, with nothing of the service. */
import { proxyActivities, proxyLocalActivities } from '@temporalio/workflow';

/** A rectangle of an image, in pixels. */
export interface CropRect {
  left: number;
  top: number;
  width: number;
  height: number;
}

export interface BareActivities {
  noop(): Promise<void>;
  post(url: string, body: string): Promise<void>;
  /** Fetches the image and crops it with sharp, as the crop tool does; answers the output's size. */
  crop(url: string, rect: CropRect): Promise<number>;
}

const { noop, post, crop } = proxyActivities<BareActivities>({ startToCloseTimeout: '30 seconds' });
const local = proxyLocalActivities<BareActivities>({ startToCloseTimeout: '30 seconds' });

/** `steps` no-op activities in sequence: one is the floor of a plain turn, which is one step. */
export async function bareStepsWorkflow(steps: number): Promise<void> {
  for (let i = 0; i < steps; i++) await noop();
}

/** One no-op activity, then one activity POSTing the event: the floor of a turn a webhook announces. */
export async function bareNotifyWorkflow(url: string, body: string): Promise<void> {
  await noop();
  await post(url, body);
}

/**
 * The crop of the crop row, as an activity or a local activity (as the service's tool call runs
 * it): what a blocking tool route cannot be cheaper than on Temporal, without the service's checks,
 * records, storage and charge.
 */
export async function bareCropWorkflow(
  url: string,
  rect: CropRect,
  asLocalActivity: boolean,
): Promise<number> {
  return asLocalActivity ? local.crop(url, rect) : crop(url, rect);
}
