/**
 * Which rows a run measures (listed in the order of the table): `npm run bench -- --rows=sustained,cpu`, or BENCH_ROWS=sustained,cpu;
 * every row when neither is given. A row's setup (processes, baselines) runs only when one of the
 * rows it serves is picked.
 */
export const ROW_KEYS = [
  'sustained',
  'cpu',
  'history',
  'snapshot',
  'send',
  'e2e',
  'crop',
  'mcp',
  'admission',
  'memory',
  'streams',
  'console',
  'bigdb',
] as const;

export type RowKey = (typeof ROW_KEYS)[number];

/** Names for several rows at once. */
const ALIASES: Record<string, readonly RowKey[]> = {
  all: ROW_KEYS,
  // the rows that run whole turns on the gateway and worker processes
  turns: ['history', 'e2e', 'sustained', 'cpu', 'send', 'memory'],
  load: ['sustained', 'cpu', 'send', 'memory'],
};

export interface Selection {
  keys: ReadonlySet<RowKey>;
  all: boolean;
  has(...keys: RowKey[]): boolean;
}

export function selectRows(argv: readonly string[], env: NodeJS.ProcessEnv): Selection {
  const flag = argv.find((a) => a.startsWith('--rows='))?.slice('--rows='.length);
  const asked = (flag ?? env.BENCH_ROWS ?? 'all')
    .split(',')
    .map((k) => k.trim())
    .filter(Boolean);
  const keys = new Set<RowKey>();
  for (const name of asked) {
    const alias = ALIASES[name];
    if (alias) alias.forEach((k) => keys.add(k));
    else if ((ROW_KEYS as readonly string[]).includes(name)) keys.add(name as RowKey);
    else
      throw new Error(
        `bench: unknown row "${name}"; pick among ${[...ROW_KEYS, ...Object.keys(ALIASES)].join(', ')}`,
      );
  }
  if (!keys.size) throw new Error('bench: --rows (or BENCH_ROWS) names no row');
  return {
    keys,
    all: keys.size === ROW_KEYS.length,
    has: (...wanted) => wanted.some((k) => keys.has(k)),
  };
}
