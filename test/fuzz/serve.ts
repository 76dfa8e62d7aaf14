/**
 * The real stack in-process for Schemathesis: PostgreSQL, Temporal dev server, worker and gateway,
 * plus one user whose API key and session cookie go to FUZZ_INFO (JSON). Stays up until SIGTERM.
 */
import { writeFile } from 'node:fs/promises';
import { createTestUser } from '../../testkit/users';
import { startGateway } from '../../testkit/gateway';
import { freePort, stopTestStack, testStack } from '../../testkit/stack';
import { startWorker } from '../../testkit/worker';

async function main(): Promise<void> {
  const info = process.env.FUZZ_INFO ?? 'fuzz-info.json';
  const port = process.env.FUZZ_PORT ? Number(process.env.FUZZ_PORT) : await freePort();
  const stack = await testStack();
  const config = stack.config({
    PORT: String(port),
    PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
    MODEL_PROVIDER: 'local',
    IMAGE_PROVIDER: 'local-preview',
    SEND_RATE_LIMIT_PER_MINUTE: '100000',
    API_RATE_LIMIT_PER_MINUTE: '100000',
    TOOL_ROUTE_TIMEOUT: '20s',
  });
  const worker = await startWorker({ config });
  const gateway = await startGateway({ config, port });
  const user = await createTestUser();
  await writeFile(
    info,
    JSON.stringify({ port, url: gateway.url, apiKey: user.apiKey, cookie: user.cookie, userId: user.userId }),
  );
  console.log(`fuzz target up at ${gateway.url}`);

  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await gateway.close().catch(() => undefined);
    await worker.stop().catch(() => undefined);
    await stopTestStack();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop());
  process.on('SIGINT', () => void stop());
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
