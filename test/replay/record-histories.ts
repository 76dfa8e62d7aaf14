import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { resolveTemporalCli } from '../../core/embedded/temporal-cli';
import { createTestUser } from '../support/auth';
import { startGateway } from '../support/gateway';
import { ScriptedModel } from '../support/scripted-model';
import { stopTestStack, testStack } from '../support/stack';
import { waitFor } from '../support/wait';
import { startWorker } from '../support/worker';

/**
 * Records agent workflow histories for the replay test. Run it (`npx tsx test/replay/record-histories.ts`)
 * only when a workflow change is meant to be incompatible, and say so in the change.
 */
async function main(): Promise<void> {
  const stack = await testStack();
  const model = new ScriptedModel([]);
  const config = stack.config({ TEMPORAL_TASK_QUEUE: `record-${randomUUID()}`, PLAN_APPROVAL_TIMEOUT: '1s' });
  const worker = await startWorker({ config, deps: { model } });
  const gateway = await startGateway({ config });
  const user = await createTestUser();
  const send = async (body: object) =>
    (await (
      await fetch(`${gateway.url}/api/v1/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...user.bearer },
        body: JSON.stringify(body),
      })
    ).json()) as { chatId: string; runId: string };
  const finished = async (turn: { chatId: string; runId: string }) => {
    await waitFor(async () => {
      const s = (await (
        await fetch(`${gateway.url}/api/v1/chats/${turn.chatId}/runs/${turn.runId}`, { headers: user.bearer })
      ).json()) as { status: string };
      return ['COMPLETE', 'FAILED', 'CANCELLED'].includes(s.status) ? s : undefined;
    });
    // The CLI writes the same JSON the Web UI downloads, which historyFromJSON reads.
    const { stdout } = await promisify(execFile)(
      await resolveTemporalCli(),
      [
        'workflow',
        'show',
        '--workflow-id',
        turn.chatId,
        '--address',
        stack.temporalAddress,
        '--output',
        'json',
      ],
      { maxBuffer: 16 * 1024 * 1024 },
    );
    return stdout;
  };
  const scenarios: [string, () => Promise<string>][] = [
    [
      'text-turn',
      async () => {
        model.replies.push({ text: 'Hello there.', toolCalls: [] });
        return finished(await send({ text: 'hello' }));
      },
    ],
    [
      'plan-expired',
      async () => {
        model.replies.push({
          text: 'Plan.',
          toolCalls: [{ id: 'c1', toolName: 'ai_image_2', input: { prompt: 'a cat' } }],
        });
        return finished(await send({ text: 'draw a cat', planMode: true }));
      },
    ],
  ];
  for (const [name, run] of scenarios) {
    await writeFile(path.join(__dirname, 'histories', `${name}.json`), await run());
    process.stdout.write(`recorded ${name}\n`);
  }
  await gateway.close();
  await worker.stop();
  await stopTestStack();
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
