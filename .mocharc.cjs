module.exports = {
  require: ['tsx/cjs', 'test/support/hooks.ts'],
  spec: ['test/**/*.test.ts'],
  ignore: ['test/faults/**'],
  timeout: 60_000,
  slow: 2_000,
  exit: true,
};
