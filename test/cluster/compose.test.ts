import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { parse } from 'yaml';
import { TEMPORAL_DATABASES, TEMPORAL_SERVICES } from '../../apps/stack/embedded/temporal-cluster';
import { preparedTool } from '../../testkit/prepared';
import { SEARCH_ATTRIBUTES } from '../../workflows/search-attributes';

/**
 * docker-compose.yml, checked without Docker (there is none on these machines): its structure,
 * that it runs the Temporal release the cluster suite runs, on the same configuration files, and
 * that this configuration renders for a container's environment, with the real server binary.
 */
const ROOT = path.resolve(__dirname, '../..');
const exec = promisify(execFile);

interface Service {
  image?: string;
  entrypoint?: string[];
  command?: string[];
  environment?: Record<string, string> | string[];
  volumes?: string[];
  depends_on?: Record<string, { condition: string }>;
}

/** `${NAME:-default}` and `${NAME:?message}` as compose resolves them with nothing set. */
function resolved(value: string): string {
  return value.replace(
    /\$\{[A-Z_]+(?::-([^}]*)|:\?[^}]*)?\}/g,
    (_m, fallback?: string) => fallback ?? 'secret',
  );
}

describe('docker-compose.yml (not run here: validated as a file)', () => {
  let services: Record<string, Service>;
  let serverVersion: string;

  before(async () => {
    const compose = parse(await readFile(path.join(ROOT, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
      services: Record<string, Service>;
    };
    services = compose.services;
    const script = await readFile(path.join(ROOT, 'scripts/temporal-cluster-tool.sh'), 'utf8');
    serverVersion = /go\.temporal\.io\/server\/cmd\/server@v([\d.]+)/.exec(script)?.[1] ?? '';
    assert.ok(serverVersion, 'the server version pinned in scripts/temporal-cluster-tool.sh');
  });

  it('runs the four Temporal services from the current server image, on deploy/temporal', () => {
    const images = Object.values(services).map((s) => s.image ?? '');
    assert.ok(!images.some((i) => i.includes('auto-setup')), 'no deprecated auto-setup image');
    for (const name of TEMPORAL_SERVICES) {
      const service = services[`temporal-${name}`];
      assert.ok(service, `a temporal-${name} service`);
      assert.equal(service.image, `temporalio/server:${serverVersion}`, 'the release the cluster suite runs');
      assert.deepEqual(service.command, [name]);
      const entrypoint = (service.entrypoint ?? []).join(' ');
      assert.match(
        entrypoint,
        /temporal-server --root \/etc\/temporal --config deploy\/temporal --env production/,
      );
      // `$$` is compose's escape: the shell gets "$0", the service named by `command`.
      assert.match(entrypoint, /start --service "\$\$0"/);
      assert.ok(service.volumes?.includes('./deploy/temporal:/etc/temporal/deploy/temporal:ro'));
    }
    assert.ok(existsSync(path.join(ROOT, 'deploy/temporal/production.yaml')));
    assert.ok(existsSync(path.join(ROOT, 'deploy/temporal/dynamicconfig.yaml')));
    // The frontend alone first: the others wait for it to be healthy.
    for (const name of ['history', 'matching', 'worker']) {
      assert.equal(
        services[`temporal-${name}`]?.depends_on?.['temporal-frontend']?.condition,
        'service_healthy',
      );
    }
  });

  it('sets the schema up with the admin tools of the same release, both databases, every start', () => {
    const schema = services['temporal-schema'];
    assert.ok(schema);
    assert.equal(schema.image, `temporalio/admin-tools:${serverVersion}`);
    const script = (schema.command ?? []).join('\n');
    for (const { name, schema: schemaName } of TEMPORAL_DATABASES) {
      assert.match(script, new RegExp(`--db ${name} setup-schema -v 0\\.0`));
      assert.match(script, new RegExp(`--db ${name} update-schema --schema-name ${schemaName}$`, 'm'));
    }
    assert.equal(
      services['temporal-frontend']?.depends_on?.['temporal-schema']?.condition,
      'service_completed_successfully',
    );
  });

  it('mounts only files that exist, and depends only on services that exist', () => {
    for (const [name, service] of Object.entries(services)) {
      for (const volume of service.volumes ?? []) {
        const source = volume.split(':')[0] as string;
        if (!source.startsWith('.')) continue; // a named volume
        assert.ok(existsSync(path.join(ROOT, source)), `${name} mounts ${source}, which exists`);
      }
      for (const dependency of Object.keys(service.depends_on ?? {})) {
        assert.ok(services[dependency], `${name} depends on ${dependency}, which exists`);
      }
    }
  });

  it('registers exactly the search attributes the workflows set', async () => {
    const script = await readFile(path.join(ROOT, 'docker/temporal-search-attributes.sh'), 'utf8');
    const listed = (variable: string) =>
      new RegExp(`^${variable}="([^"]*)"`, 'm').exec(script)?.[1]?.split(' ') ?? [];
    const ofType = (type: string) =>
      SEARCH_ATTRIBUTES.filter((k) => k.type === type)
        .map((k) => k.name)
        .sort();
    assert.deepEqual(listed('attributes').sort(), ofType('KEYWORD'), 'registered as Keyword');
    assert.deepEqual(listed('list_attributes').sort(), ofType('KEYWORD_LIST'), 'registered as KeywordList');
    assert.equal(ofType('KEYWORD').length + ofType('KEYWORD_LIST').length, SEARCH_ATTRIBUTES.length);
  });

  it('never lets anonymous users list the bucket: none, or GetObject only', () => {
    const init = (services['minio-init']?.command ?? []).join('\n');
    assert.doesNotMatch(init, /anonymous set (download|public|upload)/);
    assert.match(init, /anonymous set none/);
    const actions = [...init.matchAll(/"Action":\[([^\]]*)\]/g)].map((m) => m[1]);
    assert.deepEqual(actions, ['"s3:GetObject"'], 'a public-read policy grants GetObject alone');
    assert.match(
      init,
      /"Resource":\["arn:aws:s3:::'"\$\$S3_BUCKET"'\/\*"\]/,
      'on the objects, not the bucket',
    );
  });

  it("renders the server configuration for a container's environment", async function () {
    this.timeout(30_000);
    const frontend = services['temporal-frontend'] as Service;
    const environment = Object.fromEntries(
      Object.entries(frontend.environment as Record<string, string>).map(([k, v]) => [
        k,
        resolved(String(v)),
      ]),
    );
    const server = await preparedTool('temporal-cluster-tool.sh', ['server']);
    const { stdout } = await exec(
      server,
      ['--config', 'deploy/temporal', '--env', 'production', 'render-config'],
      // What the entrypoint adds: the container's own address.
      { cwd: ROOT, env: { PATH: process.env.PATH, ...environment, BIND_ON_IP: '172.18.0.5' } },
    );
    const config = parse(stdout) as {
      persistence: { numHistoryShards: number; datastores: Record<string, { sql: { connectAddr: string } }> };
      services: Record<string, { rpc: { bindOnIP: string; grpcPort: number } }>;
      clusterMetadata: { clusterInformation: { active: { rpcAddress: string } } };
    };
    assert.equal(config.persistence.numHistoryShards, 512);
    for (const store of Object.values(config.persistence.datastores))
      assert.equal(store.sql.connectAddr, 'postgres:5432');
    assert.equal(config.services.frontend?.rpc.bindOnIP, '172.18.0.5');
    assert.equal(config.services.frontend?.rpc.grpcPort, 7233);
    assert.equal(config.clusterMetadata.clusterInformation.active.rpcAddress, 'temporal-frontend:7233');
  });
});
