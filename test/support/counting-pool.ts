import type { Pool } from 'pg';

/**
 * `pool` for one reader only, counting the statements it sends: what an operation given it (as
 * `deps.db.pool`) reads, apart from everything else the process sends meanwhile.
 */
export function countingPool(pool: Pool): { pool: Pool; statements(): number } {
  let statements = 0;
  const counted = new Proxy(pool, {
    get(target, key) {
      if (key === 'query')
        return (...args: unknown[]) => {
          statements++;
          return (target.query as (...a: unknown[]) => unknown)(...args);
        };
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { pool: counted, statements: () => statements };
}
