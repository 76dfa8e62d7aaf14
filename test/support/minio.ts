import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { preparedTool } from '../../testkit/prepared';
import { freePort } from '../../testkit/stack';

const READY_TIMEOUT_MS = 60_000;

export interface MinioServer {
  endpoint: string;
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** Config overrides that point STORAGE_DRIVER=s3 at this server. */
  env: Record<string, string>;
  /** SIGKILL, keeping its data: object storage gone, as a crashed server is. */
  kill(): Promise<void>;
  /** Starts it again after kill(), on the same address, data and credentials. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

async function waitReady(endpoint: string, child: ChildProcess, log: () => string): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`minio exited with ${child.exitCode}:\n${log()}`);
    const ok = await fetch(`${endpoint}/minio/health/ready`)
      .then((res) => res.ok)
      .catch(() => false);
    if (ok) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`minio was not ready within ${READY_TIMEOUT_MS} ms:\n${log()}`);
}

/** A real MinIO server on a free port over a temp folder, with one empty bucket. */
export async function startMinio(): Promise<MinioServer> {
  const binary = await preparedTool('minio.sh');
  const dir = await mkdtemp(path.join(tmpdir(), 'svc-test-minio-'));
  const port = await freePort();
  const endpoint = `http://127.0.0.1:${port}`;
  const accessKeyId = `test${randomBytes(6).toString('hex')}`;
  const secretAccessKey = randomBytes(24).toString('hex');
  const consolePort = await freePort();
  let output = '';
  const collect = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-8_000);
  };
  const launch = () => {
    const launched = spawn(
      binary,
      ['server', dir, '--address', `127.0.0.1:${port}`, '--console-address', `127.0.0.1:${consolePort}`],
      {
        env: {
          ...process.env,
          MINIO_ROOT_USER: accessKeyId,
          MINIO_ROOT_PASSWORD: secretAccessKey,
          MINIO_BROWSER: 'off',
          MINIO_UPDATE: 'off',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    launched.stdout?.on('data', collect);
    launched.stderr?.on('data', collect);
    return launched;
  };
  let child = launch();
  const signal = async (sig: NodeJS.Signals) => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill(sig);
    await exited;
  };
  const kill = () => signal('SIGKILL');
  const restart = async () => {
    await kill();
    child = launch();
    await waitReady(endpoint, child, () => output);
  };
  const stop = async () => {
    await signal('SIGTERM');
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await waitReady(endpoint, child, () => output);
    const bucket = `test-${randomBytes(4).toString('hex')}`;
    const client = new S3Client({
      endpoint,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId, secretAccessKey },
    });
    await client.send(new CreateBucketCommand({ Bucket: bucket }));
    client.destroy();
    return {
      endpoint,
      bucket,
      accessKeyId,
      secretAccessKey,
      env: {
        STORAGE_DRIVER: 's3',
        S3_ENDPOINT: endpoint,
        S3_BUCKET: bucket,
        S3_REGION: 'us-east-1',
        S3_ACCESS_KEY_ID: accessKeyId,
        S3_SECRET_ACCESS_KEY: secretAccessKey,
        S3_FORCE_PATH_STYLE: 'true',
      },
      kill,
      restart,
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
