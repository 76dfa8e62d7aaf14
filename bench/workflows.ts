/** The end-to-end baseline: as many no-op activities as an agent turn without tools, then one POST. */
import { proxyActivities } from '@temporalio/workflow';

export interface BareActivities {
  noop(): Promise<void>;
  post(url: string, body: string): Promise<void>;
}

const { noop, post } = proxyActivities<BareActivities>({ startToCloseTimeout: '30 seconds' });

export async function bareTurnWorkflow(activities: number, url: string, body: string): Promise<void> {
  for (let i = 0; i < activities; i++) await noop();
  await post(url, body);
}
