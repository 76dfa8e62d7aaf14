import assert from 'node:assert/strict';
import { ConfigError, loadConfig } from '../../core/config/config';

/** The least environment that loads. */
export const validEnv = {
  DATABASE_URL: 'postgresql://u:p@localhost:5432/db',
  APP_SECRET: 'x'.repeat(32),
};

/** The problems a refused environment is reported with; fails when it loads. */
export function configProblems(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (err) {
    assert.ok(err instanceof ConfigError);
    return [...err.problems];
  }
  assert.fail('expected the configuration to be refused');
}
