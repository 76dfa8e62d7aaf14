/** The bare baseline in its own process (bench/bare-process.ts), driven from the bench. */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import type { Figures } from './measure';
import { startProcess, type ServiceProcess } from './services';

export interface BareStack {
  process: ServiceProcess;
  /** the task queue its worker polls: bench/workflows.ts started there run on it */
  taskQueue: string;
  /** Starts `lanes` clients in the bare process, each starting and awaiting one workflow of `steps` no-op activities after the other. */
  startLoad(lanes: number, steps: number): Promise<void>;
  /** Opens the load's measured window. */
  mark(): Promise<void>;
  /** Closes the window and drains the load. */
  stopLoad(): Promise<Figures>;
  stop(): Promise<void>;
}

/**
 * The bare process at `nice`: the service's worker runs at the stack's background priority, so the
 * bare worker standing for it does too, and a shared machine's other work weighs on both alike.
 */
export async function startBare(temporalAddress: string, nice: number): Promise<BareStack> {
  const taskQueue = `bench-bare-${randomBytes(4).toString('hex')}`;
  const child = await startProcess(
    'bare',
    path.join(__dirname, 'bare-process.ts'),
    { TEMPORAL_ADDRESS: temporalAddress, BENCH_BARE_QUEUE: taskQueue },
    nice,
  );
  return {
    process: child,
    taskQueue,
    startLoad: async (lanes, steps) => void (await child.request({ cmd: 'load', lanes, steps })),
    mark: async () => void (await child.request({ cmd: 'mark' })),
    stopLoad: async () => (await child.request<{ figures: Figures }>({ cmd: 'stop' })).figures,
    stop: () => child.stop(),
  };
}
