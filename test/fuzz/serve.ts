/**
 * The real stack in-process for Schemathesis: PostgreSQL, Temporal dev server, worker and two
 * gateways (limits lifted, and at their defaults), plus a user for each whose API key (and the
 * first's session cookie) go to FUZZ_INFO (JSON). Stays up until SIGTERM.
 */
import { writeFile } from 'node:fs/promises';
import { createTestUser } from '../../testkit/users';
import { startGateway } from '../../testkit/gateway';
import { freePort, stopTestStack, testStack } from '../../testkit/stack';
import { startWorker } from '../../testkit/worker';

async function main(): Promise<void> {
  const info = process.env.FUZZ_INFO ?? 'fuzz-info.json';
  const port = process.env.FUZZ_PORT ? Number(process.env.FUZZ_PORT) : await freePort();
  const limitedPort = await freePort();
  const stack = await testStack();
  // As production runs: the SSRF guard refuses private and loopback URLs, webhooks must be https.
  const settings = (at: number) => ({
    PORT: String(at),
    PUBLIC_BASE_URL: `http://127.0.0.1:${at}`,
    MODEL_PROVIDER: 'local',
    IMAGE_PROVIDER: 'local-preview',
    ALLOW_PRIVATE_NETWORK_URLS: 'false',
    ALLOW_INSECURE_WEBHOOKS: 'false',
    TOOL_ROUTE_TIMEOUT: '20s',
    // A 500 the fuzzer finds is a bug: its stack goes to the server log, which a failed run prints.
    LOG_LEVEL: 'error',
  });
  // The main gateway lifts the rate limits, so thousands of requests a minute reach the work
  // itself, and the cap on runs in progress, which the stateful phase's plans left waiting for a
  // decision would reach; a second one keeps the defaults, for a pass that meets them (429 and its
  // headers).
  const config = stack.config({
    ...settings(port),
    SEND_RATE_LIMIT_PER_MINUTE: '100000',
    API_RATE_LIMIT_PER_MINUTE: '100000',
    MAX_ACTIVE_RUNS_PER_USER: '100000',
  });
  const worker = await startWorker({ config });
  const gateway = await startGateway({ config, port });
  const limited = await startGateway({ config: stack.config(settings(limitedPort)), port: limitedPort });
  const user = await createTestUser();
  // Its own user, so the plans the main pass left waiting do not count against its cap.
  const limitedUser = await createTestUser();
  await writeFile(
    info,
    JSON.stringify({
      port,
      limitedPort,
      url: gateway.url,
      apiKey: user.apiKey,
      limitedApiKey: limitedUser.apiKey,
      cookie: user.cookie,
      userId: user.userId,
    }),
  );
  console.log(`fuzz target up at ${gateway.url}, with the default rate limits at ${limited.url}`);

  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await gateway.close().catch(() => undefined);
    await limited.close().catch(() => undefined);
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
