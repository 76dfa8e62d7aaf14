import { temporalReachable } from '../core/temporal/connection';
import type { OperationDeps } from './deps';

const READINESS_TIMEOUT_MS = 2_000;

export interface Readiness {
  status: 'ready' | 'unavailable';
  database: 'up' | 'down';
  temporal: 'up' | 'down';
}

/** Whether this process can serve: PostgreSQL and Temporal both answer. */
export function createHealthOperations(deps: OperationDeps) {
  async function databaseReachable(): Promise<boolean> {
    const client = await deps.db.pool.connect().catch(() => undefined);
    if (!client) return false;
    try {
      await client.query({ text: 'SELECT 1', query_timeout: READINESS_TIMEOUT_MS } as never);
      return true;
    } catch {
      return false;
    } finally {
      client.release();
    }
  }

  return {
    async readiness(): Promise<Readiness> {
      const [database, temporal] = await Promise.all([
        databaseReachable(),
        temporalReachable(deps.temporal.connection, READINESS_TIMEOUT_MS),
      ]);
      return {
        status: database && temporal ? 'ready' : 'unavailable',
        database: database ? 'up' : 'down',
        temporal: temporal ? 'up' : 'down',
      };
    },
  };
}

export type HealthOperations = ReturnType<typeof createHealthOperations>;
