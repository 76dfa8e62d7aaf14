import { listenError } from '../../../core/process/ports';
import { describeProcess, listenerOf } from './procfs';

/**
 * Why `port` cannot be listened on at `host`, naming the process that holds it; undefined when it
 * is free. A probe, not a reservation: it answers for this moment only.
 */
export async function portProblem(port: number, host: string): Promise<string | undefined> {
  const code = await listenError(port, host);
  if (code === undefined) return undefined;
  if (code !== 'EADDRINUSE') return `port ${port} on ${host} cannot be listened on (${code})`;
  const holder = await listenerOf(port);
  return `port ${port} is in use by ${holder ? describeProcess(holder) : 'a process of another user'}`;
}
