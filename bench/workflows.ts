/** The bare baselines: the least a turn can be as a Temporal workflow, with nothing of the service. */
import { proxyActivities } from '@temporalio/workflow';

export interface BareActivities {
  noop(): Promise<void>;
  post(url: string, body: string): Promise<void>;
}

const { noop, post } = proxyActivities<BareActivities>({ startToCloseTimeout: '30 seconds' });

/** `steps` no-op activities in sequence: one is the floor of a plain turn, which is one step. */
export async function bareStepsWorkflow(steps: number): Promise<void> {
  for (let i = 0; i < steps; i++) await noop();
}

/** One no-op activity, then one activity POSTing the event: the floor of a turn a webhook announces. */
export async function bareNotifyWorkflow(url: string, body: string): Promise<void> {
  await noop();
  await post(url, body);
}
