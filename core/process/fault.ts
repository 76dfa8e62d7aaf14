import type { Config } from '../config/config';
import type { FaultPoint } from '../config/fault-points';

/**
 * A test-only fault point. Inert unless FAULT_PAUSE_AT names it (never in production: the config
 * refuses it there). When named, the process prints one marker line on stderr, straight rather
 * than through the logger so that no log level or transport can hide or delay it, and holds this
 * work for FAULT_PAUSE_FOR, so a suite that reads the line kills the process at this very moment
 * rather than at a guessed time.
 */
export async function faultPoint(
  config: Pick<Config, 'FAULT_PAUSE_AT' | 'FAULT_PAUSE_FOR'>,
  point: FaultPoint,
  detail: Record<string, string | number> = {},
): Promise<void> {
  if (!config.FAULT_PAUSE_AT.includes(point)) return;
  process.stderr.write(`fault point reached: ${point} ${JSON.stringify(detail)}\n`);
  await new Promise((resolve) => setTimeout(resolve, config.FAULT_PAUSE_FOR));
}
