import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../core/config/config';
import { configProblems, validEnv } from '../support/config';

const valid = validEnv;
const problems = configProblems;

const claude = {
  name: 'claude',
  provider: 'anthropic',
  modelId: 'claude-sonnet-4-5',
  contextWindow: 200_000,
  price: { input: 3, output: 15, cachedInput: '0.3' },
};

describe('the models an operator offers', () => {
  it('reads MODELS, with each provider’s key from its usual variable, and the first as the default', () => {
    const config = loadConfig({
      ...valid,
      ANTHROPIC_API_KEY: 'sk-ant-test',
      MODELS: JSON.stringify([
        claude,
        { name: 'local', provider: 'local' },
        {
          name: 'llama',
          provider: 'openai-compatible',
          modelId: 'llama3.1:8b',
          baseUrl: 'http://127.0.0.1:11434/v1',
          contextWindow: 131_072,
        },
      ]),
    });
    assert.equal(config.models.defaultModel, 'claude');
    assert.deepEqual(config.models.entries[0], {
      name: 'claude',
      provider: 'anthropic',
      modelId: 'claude-sonnet-4-5',
      baseUrl: undefined,
      apiKey: 'sk-ant-test',
      contextWindow: 200_000,
      maxOutputTokens: 4_096,
      price: { input: '3', output: '15', cachedInput: '0.3' },
    });
    assert.deepEqual(
      config.models.entries.map((e) => [e.name, e.modelId, e.contextWindow, e.apiKey]),
      [
        ['claude', 'claude-sonnet-4-5', 200_000, 'sk-ant-test'],
        ['local', 'local', 32_768, undefined],
        ['llama', 'llama3.1:8b', 131_072, undefined],
      ],
    );
  });

  it('reads MODELS_FILE, a key from the variable an entry names, and MODEL_DEFAULT', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'models-'));
    const file = path.join(dir, 'models.json');
    await writeFile(
      file,
      JSON.stringify([
        { name: 'local', provider: 'local' },
        {
          name: 'router',
          provider: 'openai-compatible',
          modelId: 'openai/gpt-4o-mini',
          baseUrl: 'https://openrouter.ai/api/v1',
          apiKeyEnv: 'OPENROUTER_API_KEY',
          contextWindow: 128_000,
        },
      ]),
    );
    const config = loadConfig({
      ...valid,
      MODELS_FILE: file,
      MODEL_DEFAULT: 'router',
      OPENROUTER_API_KEY: 'or-key',
    });
    assert.equal(config.models.defaultModel, 'router');
    assert.equal(config.models.entries[1]?.apiKey, 'or-key');
  });

  it('keeps MODEL_PROVIDER as the shorthand of a one-model list', () => {
    assert.deepEqual(loadConfig(valid).models, { entries: [], defaultModel: undefined });
    assert.deepEqual(
      loadConfig({ ...valid, MODEL_PROVIDER: 'local' }).models.entries.map((e) => [e.name, e.provider]),
      [['local', 'local']],
    );
    const openai = loadConfig({
      ...valid,
      MODEL_PROVIDER: 'openai',
      OPENAI_API_KEY: 'sk-test',
      OPENAI_BASE_URL: 'http://127.0.0.1:11434/v1',
      OPENAI_MODEL: 'llama3.1',
    }).models.entries[0];
    assert.deepEqual(
      [openai?.name, openai?.provider, openai?.baseUrl, openai?.apiKey],
      ['llama3.1', 'openai-compatible', 'http://127.0.0.1:11434/v1', 'sk-test'],
    );
    assert.deepEqual(problems({ ...valid, MODEL_PROVIDER: 'openai' }), [
      'MODELS[0] ("gpt-4o-mini"): OPENAI_API_KEY is not set (the openai-compatible API key)',
    ]);
  });

  it('refuses a bad entry, naming it and its field, and never echoing a key', () => {
    const found = problems({
      ...valid,
      ANTHROPIC_API_KEY: 'sk-ant-secret-value',
      MODELS: JSON.stringify([
        claude,
        { name: 'gemini', provider: 'google', contextWindow: 1_000_000 },
        { name: 'claude', provider: 'local' },
        { name: 'vllm', provider: 'openai-compatible', contextWindow: 32_768 },
        { name: 'cheap', provider: 'local', price: { input: 'free', output: 1 } },
        { name: 'odd', provider: 'mistral', contextWindow: 32_768 },
        { name: 'gpt', provider: 'openai', apiKeyEnv: 'MY_OPENAI_KEY' },
      ]),
      MODEL_DEFAULT: 'nope',
    });
    assert.deepEqual(found, [
      'MODELS[1] ("gemini"): GOOGLE_GENERATIVE_AI_API_KEY is not set (the google API key)',
      'MODELS[2] ("claude").name: another model has this name',
      'MODELS[3] ("vllm").baseUrl: is required for an openai-compatible server',
      'MODELS[4] ("cheap").price.input: expected credits per million tokens, a decimal such as 3 or 0.15 (at most 6 places)',
      'MODELS[5] ("odd").provider: Invalid option: expected one of "local"|"openai"|"anthropic"|"google"|"openai-compatible"',
      'MODELS[6] ("gpt").contextWindow: is required (the model\'s window in tokens)',
      'MODELS[6] ("gpt"): MY_OPENAI_KEY is not set (the openai API key)',
      'MODEL_DEFAULT: names no model of MODELS ("nope")',
    ]);
    assert.ok(!found.join('\n').includes('sk-ant-secret-value'));
    assert.deepEqual(problems({ ...valid, MODELS: '{"name":' }), [
      'MODELS: is not valid JSON (expected an array of models, see docs/models.md)',
    ]);
    assert.deepEqual(problems({ ...valid, MODELS: '[]', MODEL_PROVIDER: 'local' }), [
      'MODEL_PROVIDER: is a shorthand for a one-model list; leave it out when MODELS or MODELS_FILE is set',
    ]);
    assert.ok(problems({ ...valid, AGENT_MAX_STEPS: '0' }).some((p) => p.startsWith('AGENT_MAX_STEPS:')));
  });

  it('stops a process at start on a bad entry, naming it', async () => {
    const root = path.resolve(__dirname, '../..');
    const child = spawn(process.execPath, ['--import', 'tsx', 'apps/worker/main.ts'], {
      cwd: root,
      env: { ...valid, PATH: process.env.PATH, MODELS: JSON.stringify([{ name: 'x', provider: 'openai' }]) },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    assert.equal(code, 78, stderr);
    assert.match(stderr, /MODELS\[0\] \("x"\)\.contextWindow: is required/);
    assert.match(stderr, /MODELS\[0\] \("x"\): OPENAI_API_KEY is not set/);
  });
});
