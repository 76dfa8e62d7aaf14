import assert from 'node:assert/strict';
import { ConfigError, loadConfig, operatorHost } from '../../core/config/config';

const valid = {
  DATABASE_URL: 'postgresql://u:p@localhost:5432/db',
  APP_SECRET: 'x'.repeat(32),
};

function problems(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (err) {
    assert.ok(err instanceof ConfigError);
    return [...err.problems];
  }
  assert.fail('expected the configuration to be refused');
}

describe('configuration', () => {
  it('applies the documented defaults and freezes the result', () => {
    const config = loadConfig(valid);
    assert.equal(config.PORT, 3000);
    assert.equal(config.SEND_RATE_LIMIT_PER_MINUTE, 60);
    assert.equal(config.PLAN_APPROVAL_TIMEOUT, 24 * 3_600_000);
    assert.equal(config.ALLOW_INSECURE_WEBHOOKS, false);
    assert.equal(config.ALLOW_PRIVATE_NETWORK_URLS, false);
    assert.equal(config.ALLOW_SIGN_UP, true);
    assert.equal(config.PRICE_AI_IMAGE_2, '10');
    assert.ok(Object.isFrozen(config));
  });

  it('parses booleans and durations', () => {
    const config = loadConfig({
      ...valid,
      ALLOW_SIGN_UP: 'false',
      PLAN_APPROVAL_TIMEOUT: '90s',
      TOOL_ROUTE_TIMEOUT: '500ms',
    });
    assert.equal(config.ALLOW_SIGN_UP, false);
    assert.equal(config.PLAN_APPROVAL_TIMEOUT, 90_000);
    assert.equal(config.TOOL_ROUTE_TIMEOUT, 500);
  });

  it('paces the local model only when LOCAL_MODEL_PACE says so, and refuses a bad pace', () => {
    assert.equal(loadConfig(valid).LOCAL_MODEL_PACE, 0);
    assert.equal(loadConfig({ ...valid, LOCAL_MODEL_PACE: '' }).LOCAL_MODEL_PACE, 0);
    assert.equal(loadConfig({ ...valid, LOCAL_MODEL_PACE: '150ms' }).LOCAL_MODEL_PACE, 150);
    assert.deepEqual(
      problems({ ...valid, LOCAL_MODEL_PACE: 'slow' }).map((p) => p.split(':')[0]),
      ['LOCAL_MODEL_PACE'],
    );
  });

  it('takes TRUST_PROXY as a hop count or a list of proxy addresses, and refuses true', () => {
    assert.equal(loadConfig(valid).TRUST_PROXY, false);
    assert.equal(loadConfig({ ...valid, TRUST_PROXY: '2' }).TRUST_PROXY, 2);
    assert.deepEqual(loadConfig({ ...valid, TRUST_PROXY: 'loopback, 10.0.0.0/8, fd00::1' }).TRUST_PROXY, [
      'loopback',
      '10.0.0.0/8',
      'fd00::1',
    ]);
    for (const bad of ['true', '10.0.0.0/33', 'proxy.example', '10.0.0.1/8/2']) {
      assert.ok(
        problems({ ...valid, TRUST_PROXY: bad }).some((p) => p.startsWith('TRUST_PROXY:')),
        bad,
      );
    }
  });

  it('takes SIGN_IN_LOCKOUT_MAX as a duration of at least 15m, 24h by default', () => {
    assert.equal(loadConfig(valid).SIGN_IN_LOCKOUT_MAX, 24 * 3_600_000);
    assert.equal(loadConfig({ ...valid, SIGN_IN_LOCKOUT_MAX: '7d' }).SIGN_IN_LOCKOUT_MAX, 7 * 86_400_000);
    assert.equal(loadConfig({ ...valid, SIGN_IN_LOCKOUT_MAX: '15m' }).SIGN_IN_LOCKOUT_MAX, 900_000);
    for (const bad of ['14m', 'forever', '']) {
      assert.deepEqual(
        problems({ ...valid, SIGN_IN_LOCKOUT_MAX: bad }).map((p) => p.split(':')[0]),
        ['SIGN_IN_LOCKOUT_MAX'],
        bad,
      );
    }
  });

  it('refuses to start in production with ALLOW_INSECURE_WEBHOOKS or ALLOW_PRIVATE_NETWORK_URLS', () => {
    for (const name of ['ALLOW_INSECURE_WEBHOOKS', 'ALLOW_PRIVATE_NETWORK_URLS'] as const) {
      const found = problems({ ...valid, NODE_ENV: 'production', [name]: 'true' });
      assert.deepEqual(
        found.map((p) => p.split(':')[0]),
        [name],
      );
      assert.equal(loadConfig({ ...valid, NODE_ENV: 'development', [name]: 'true' })[name], true);
    }
    assert.equal(loadConfig({ ...valid, NODE_ENV: 'production' }).ALLOW_PRIVATE_NETWORK_URLS, false);
  });

  it('refuses an empty or fractional number rather than reading it as 0 or rounding it', () => {
    for (const name of ['PORT', 'WORKER_MAX_CACHED_WORKFLOWS', 'PASSWORD_HASH_QUEUE', 'DATABASE_POOL_SIZE'])
      for (const bad of ['', ' ', '2.5', '1e3'])
        assert.deepEqual(
          problems({ ...valid, [name]: bad }),
          [`${name}: expected a whole number`],
          `${name}=${JSON.stringify(bad)}`,
        );
    assert.equal(loadConfig({ ...valid, PORT: ' 8080 ' }).PORT, 8080);
  });

  it('refuses a wait or a stream heartbeat past 10 minutes, which a timer could not hold', () => {
    for (const name of ['MCP_WAIT_MAX', 'STREAM_HEARTBEAT_INTERVAL'])
      assert.deepEqual(problems({ ...valid, [name]: '25d' }), [`${name}: must be at most 10m`]);
    assert.equal(loadConfig({ ...valid, MCP_WAIT_MAX: '10m' }).MCP_WAIT_MAX, 600_000);
  });

  it('names each bad variable without echoing its value', () => {
    const found = problems({
      DATABASE_URL: 'mysql://secret-host/db',
      APP_SECRET: 'short-secret-value',
      PORT: 'eighty',
      ALLOW_SIGN_UP: 'maybe',
      PLAN_APPROVAL_TIMEOUT: 'forever',
    });
    for (const name of ['DATABASE_URL', 'APP_SECRET', 'PORT', 'ALLOW_SIGN_UP', 'PLAN_APPROVAL_TIMEOUT']) {
      assert.ok(
        found.some((p) => p.startsWith(`${name}:`)),
        `${name} is named in ${found.join(' | ')}`,
      );
    }
    assert.ok(!found.join(' ').includes('short-secret-value'));
    assert.ok(!found.join(' ').includes('secret-host'));
  });

  it('keeps run events 7 days by default, and refuses a window under a minute', () => {
    assert.equal(loadConfig(valid).RUN_EVENTS_RETENTION, 7 * 24 * 3600_000);
    assert.equal(loadConfig({ ...valid, RUN_EVENTS_RETENTION: '1h' }).RUN_EVENTS_RETENTION, 3600_000);
    for (const bad of ['30s', '0s', 'soon'])
      assert.ok(
        problems({ ...valid, RUN_EVENTS_RETENTION: bad }).some((p) => p.startsWith('RUN_EVENTS_RETENTION:')),
        bad,
      );
  });

  it('requires a missing DATABASE_URL', () => {
    assert.ok(problems({ APP_SECRET: valid.APP_SECRET }).some((p) => p.startsWith('DATABASE_URL:')));
  });

  it('requires the S3 settings when the S3 driver is chosen', () => {
    const found = problems({ ...valid, STORAGE_DRIVER: 's3' });
    assert.ok(found.some((p) => p.startsWith('S3_BUCKET:')));
    assert.ok(found.some((p) => p.startsWith('S3_ACCESS_KEY_ID:')));
  });

  it('takes the fault-injection pause only outside production', () => {
    assert.deepEqual(loadConfig(valid).FAULT_PAUSE_AT, []);
    const set = loadConfig({ ...valid, FAULT_PAUSE_AT: 'admission, model-step', FAULT_PAUSE_FOR: '2s' });
    assert.deepEqual(set.FAULT_PAUSE_AT, ['admission', 'model-step']);
    assert.equal(set.FAULT_PAUSE_FOR, 2000);
    assert.ok(problems({ ...valid, FAULT_PAUSE_AT: 'nowhere' }).some((p) => p.startsWith('FAULT_PAUSE_AT')));
    assert.deepEqual(problems({ ...valid, NODE_ENV: 'production', FAULT_PAUSE_AT: 'admission' }), [
      'FAULT_PAUSE_AT: is a test-only fault injection and may not be set in production',
    ]);
  });

  it('refuses a malformed price', () => {
    assert.ok(problems({ ...valid, PRICE_CROP_IMAGE: '-1' }).some((p) => p.startsWith('PRICE_CROP_IMAGE:')));
  });

  it('keeps the operator ports on loopback unless METRICS_TOKEN guards them, whatever HOST says', () => {
    const token = 'metrics-token-0123456789';
    assert.equal(operatorHost(loadConfig(valid)), '127.0.0.1');
    assert.equal(operatorHost(loadConfig({ ...valid, HOST: '0.0.0.0' })), '127.0.0.1');
    assert.equal(operatorHost(loadConfig({ ...valid, HOST: '0.0.0.0', METRICS_TOKEN: token })), '0.0.0.0');
    assert.equal(operatorHost(loadConfig({ ...valid, METRICS_HOST: '::1' })), '::1');
    assert.equal(
      operatorHost(loadConfig({ ...valid, METRICS_HOST: '10.0.0.5', METRICS_TOKEN: token })),
      '10.0.0.5',
    );
    for (const host of ['0.0.0.0', '::', '10.0.0.5', 'metrics.internal'])
      assert.deepEqual(problems({ ...valid, METRICS_HOST: host }), [
        'METRICS_HOST: beyond loopback needs METRICS_TOKEN: set it, or leave METRICS_HOST unset (127.0.0.1)',
      ]);
  });
});
