import tseslint from 'typescript-eslint';
import importX, { createNodeResolver } from 'eslint-plugin-import-x';
import skipNeedsIssue from './scripts/eslint-rules/skip-needs-issue.mjs';

const NODE_BUILTINS = [
  'assert',
  'buffer',
  'child_process',
  'cluster',
  'crypto',
  'dgram',
  'dns',
  'events',
  'fs',
  'fs/promises',
  'http',
  'http2',
  'https',
  'net',
  'os',
  'path',
  'process',
  'stream',
  'timers',
  'tls',
  'url',
  'util',
  'worker_threads',
  'zlib',
];

export default tseslint.config(
  {
    ignores: [
      'node_modules/**',
      '.data/**',
      '.data-cluster/**',
      '.tools/**',
      'core/db/generated/**',
      'bench/results/**',
      // a developer's own untracked files (see .gitignore) are not the project's to lint
      '.scratch/**',
      '.schemathesis/**',
      // the typed client's build output (npm pack writes it; see clients/typescript/.gitignore)
      'clients/typescript/dist/**',
    ],
  },
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts', '**/*.tsx'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    plugins: { 'import-x': importX },
    settings: { 'import-x/resolver-next': [createNodeResolver({ extensions: ['.ts', '.js', '.json'] })] },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false } }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'import-x/no-cycle': 'error',
      eqeqeq: ['error', 'always'],
      // Imports point down: apps -> operations -> workflows/activities -> core. Production code
      // never reaches into the tests, their kit or the bench.
      'import-x/no-restricted-paths': [
        'error',
        {
          zones: [
            { target: './core', from: ['./apps', './operations', './workflows', './activities'] },
            { target: ['./workflows', './activities'], from: ['./apps', './operations'] },
            { target: './operations', from: './apps' },
            // REST and MCP share through operations/ and core/; the gateway's app only mounts MCP.
            { target: './apps/mcp', from: './apps/gateway' },
            {
              target: ['./apps/gateway/routes', './apps/gateway/http', './apps/gateway/middleware'],
              from: './apps/mcp',
            },
            // The launcher's own code serves it, the tests and the bench, never a service process.
            {
              target: ['./apps/gateway', './apps/worker', './apps/migrate', './apps/mcp'],
              from: './apps/stack',
            },
            {
              target: ['./core', './workflows', './activities', './operations', './apps'],
              from: ['./test', './testkit', './bench'],
            },
            { target: './testkit', from: ['./test', './bench'] },
            { target: './bench', from: './test' },
          ],
        },
      ],
    },
  },
  {
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    plugins: { project: { rules: { 'skip-needs-issue': skipNeedsIssue } } },
    rules: { 'project/skip-needs-issue': 'error' },
  },
  {
    // Workflow code runs in Temporal's deterministic sandbox: no I/O, no Node, no database.
    files: ['workflows/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            ...NODE_BUILTINS,
            ...NODE_BUILTINS.map((m) => `node:${m}`),
            'express',
            'pg',
            '@prisma/client',
          ].map((name) => ({
            name,
            message:
              'Workflow code may not import Node built-ins, Prisma, express or activity implementations.',
          })),
          patterns: [
            {
              group: [
                '**/activities/**',
                '**/activities',
                '**/apps/**',
                '**/core/storage/**',
                '**/core/net/**',
              ],
              allowTypeImports: true,
              message: 'Workflows may import activity types only, never their code.',
            },
            {
              group: ['**/core/db/**', '**/generated/**', '@prisma/*'],
              message: 'Workflow code may not touch the database.',
            },
            { group: ['node:*'], message: 'Workflow code may not import Node built-ins.' },
          ],
        },
      ],
    },
  },
  {
    files: ['**/*.mjs', '**/*.cjs'],
    ...tseslint.configs.disableTypeChecked,
  },
  {
    // In CommonJS, require is the import statement.
    files: ['**/*.cjs'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
