import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { createTestUser, type TestUser } from '../../testkit/users';
import { quadrantImage, startFakePredictionServer, testVideo } from '../support/fake-providers';
import { startGateway, type TestGateway } from '../../testkit/gateway';
import { freePort, testStack } from '../../testkit/stack';
import { waitFor } from '../support/wait';
import { startWorker, type TestWorker } from '../../testkit/worker';

interface Snapshot {
  status: string;
  text: string;
  error: string | null;
  assistantMessageId: string;
  toolCalls: {
    toolName: string;
    status: string;
    error: string | null;
    result: { output: { url: string }; assets: { url: string; mimeType: string }[] } | null;
  }[];
}

/** The local agent, real tools, real storage: one turn per tool, end to end. */
describe('the local agent using tools', function () {
  this.timeout(180_000);
  let gateway: TestGateway;
  let worker: TestWorker;
  let user: TestUser;
  let prediction: Awaited<ReturnType<typeof startFakePredictionServer>>;

  before(async () => {
    prediction = await startFakePredictionServer({ pollsBeforeDone: 1 });
    // Tools fetch uploads through their durable URLs, so those must name this gateway.
    const port = await freePort();
    const config = (await testStack()).config({
      TEMPORAL_TASK_QUEUE: `agent-tools-${randomUUID()}`,
      MODEL_PROVIDER: 'local',
      IMAGE_PROVIDER: 'local-preview',
      PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
      STORAGE_LOCAL_DIR: await mkdtemp(path.join(tmpdir(), 'svc-agent-tools-')),
      PROVIDER_POLL_INTERVAL: '100ms',
    });
    worker = await startWorker({ config });
    gateway = await startGateway({ config, port });
    user = await createTestUser();
  });
  after(async () => {
    await gateway.close();
    await worker.stop();
    await prediction.close();
  });

  async function upload(name: string, body: Buffer): Promise<string> {
    const form = new FormData();
    form.append('file', new Blob([body]), name);
    const res = await fetch(`${gateway.url}/api/v1/uploads`, {
      method: 'POST',
      headers: user.bearer,
      body: form,
    });
    assert.equal(res.status, 201, await res.clone().text());
    return ((await res.json()) as { attachments: { id: string }[] }).attachments[0]?.id ?? '';
  }

  async function turn(
    body: Record<string, unknown>,
    who: TestUser = user,
  ): Promise<Snapshot & { chatId: string; runId: string }> {
    const res = await fetch(`${gateway.url}/api/v1/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...who.bearer },
      body: JSON.stringify(body),
    });
    assert.equal(res.status, 202, await res.clone().text());
    const { chatId, runId } = (await res.json()) as { chatId: string; runId: string };
    const done = await waitFor(
      async () => {
        const s = (await (
          await fetch(`${gateway.url}/api/v1/chats/${chatId}/runs/${runId}`, { headers: who.bearer })
        ).json()) as Snapshot;
        return ['COMPLETE', 'FAILED', 'CANCELLED'].includes(s.status) ? s : undefined;
      },
      { what: 'the run to finish', timeoutMs: 120_000 },
    );
    return { ...done, chatId, runId };
  }

  const fetchAsset = async (url: string) => {
    const u = new URL(url);
    return Buffer.from(await (await fetch(`${gateway.url}${u.pathname}${u.search}`)).arrayBuffer());
  };

  it('generates an image, stores it as an attachment of the assistant message, and charges once', async () => {
    const done = await turn({ text: 'generate an image of a lighthouse at dusk' });
    assert.equal(done.status, 'COMPLETE', done.error ?? '');
    assert.equal(done.toolCalls.length, 1);
    assert.equal(done.toolCalls[0]?.toolName, 'ai_image_2');
    assert.equal(done.toolCalls[0]?.status, 'SUCCEEDED');
    // The reply names what was made; the signed URL is the result's, not text to read.
    assert.match(done.text, /ai_image_2 made an image, shown below\./);
    assert.doesNotMatch(done.text, /https?:|\/files\//);

    const messages = (await (
      await fetch(`${gateway.url}/api/v1/chats/${done.chatId}/messages`, { headers: user.bearer })
    ).json()) as {
      data: {
        id: string;
        role: string;
        contentBlocks: { type: string }[];
        attachments: { mimeType: string; url: string }[];
      }[];
    };
    const assistant = messages.data.find((m) => m.role === 'assistant');
    assert.equal(assistant?.id, done.assistantMessageId);
    assert.deepEqual(
      assistant?.contentBlocks.map((b) => b.type),
      ['text', 'tool_use', 'tool_result', 'text', 'image'],
    );
    assert.equal(assistant?.attachments.length, 1);
    assert.equal(assistant?.attachments[0]?.mimeType, 'image/png');
    const png = await sharp(await fetchAsset(assistant?.attachments[0]?.url ?? '')).metadata();
    assert.equal(png.format, 'png');

    const { db } = await testStack();
    const charges = await db.pool.query(
      `SELECT l.amount::text FROM "CreditLedgerEntry" l JOIN "ToolCall" t ON t.id = l."toolCallId" WHERE t."runId" = $1`,
      [done.runId],
    );
    assert.deepEqual(charges.rows, [{ amount: '10.0000' }]);
  });

  it('tells the model when the balance cannot pay a tool, charging nothing and leaving the run to finish', async () => {
    const { db } = await testStack();
    const poor = await createTestUser();
    await db.pool.query(`UPDATE "User" SET "creditBalance" = 5 WHERE id = $1`, [poor.userId]);
    const done = await turn({ text: 'generate an image of a lighthouse at dusk' }, poor);
    assert.equal(done.status, 'COMPLETE', done.error ?? '');
    assert.deepEqual(done.toolCalls, [], 'no call was opened');
    const messages = (await (
      await fetch(`${gateway.url}/api/v1/chats/${done.chatId}/messages`, { headers: poor.bearer })
    ).json()) as { data: { role: string; contentBlocks: { type: string; error?: string }[] }[] };
    const result = messages.data
      .find((m) => m.role === 'assistant')
      ?.contentBlocks.find((b) => b.type === 'tool_result');
    assert.match(result?.error ?? '', /credit balance cannot pay/);
    const { rows } = await db.pool.query<{ balance: string }>(
      `SELECT "creditBalance"::text AS balance FROM "User" WHERE id = $1`,
      [poor.userId],
    );
    assert.equal(rows[0]?.balance, '5.0000');
  });

  it('crops an uploaded image to its left half', async () => {
    const attachmentId = await upload('quadrants.png', await quadrantImage(200, 100));
    const done = await turn({ text: 'crop this to the left half', attachmentIds: [attachmentId] });
    assert.equal(done.status, 'COMPLETE', done.error ?? '');
    assert.equal(done.toolCalls[0]?.toolName, 'crop_image');
    const cropped = await sharp(await fetchAsset(done.toolCalls[0]?.result?.output.url ?? '')).metadata();
    assert.deepEqual([cropped.width, cropped.height], [100, 100]);
  });

  it('merges two uploaded videos with a fade', async () => {
    const a = await upload(
      'a.mp4',
      await testVideo({ width: 320, height: 240, fps: 25, seconds: 2, audio: true }),
    );
    const b = await upload(
      'b.mp4',
      await testVideo({ width: 160, height: 120, fps: 30, seconds: 2, audio: false }),
    );
    const done = await turn({ text: 'merge these videos with a fade', attachmentIds: [a, b] });
    assert.equal(done.status, 'COMPLETE', done.error ?? '');
    assert.equal(done.toolCalls[0]?.toolName, 'merge_videos');
    assert.equal(done.toolCalls[0]?.status, 'SUCCEEDED', JSON.stringify(done.toolCalls[0]));
    assert.equal(done.toolCalls[0]?.result?.assets[0]?.mimeType, 'video/mp4');
  });

  it('cancels a run while its tool waits on the provider: the run ends CANCELLED and the call FAILED', async () => {
    const config = (await testStack()).config({
      TEMPORAL_TASK_QUEUE: `agent-tools-cancel-${randomUUID()}`,
      MODEL_PROVIDER: 'local',
      IMAGE_PROVIDER: 'prediction',
      PREDICTION_API_URL: prediction.url,
      PREDICTION_API_TOKEN: 'r8_test_token',
      PROVIDER_POLL_INTERVAL: '100ms',
    });
    const slowWorker = await startWorker({ config });
    const slowGateway = await startGateway({ config });
    try {
      const res = await fetch(`${slowGateway.url}/api/v1/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...user.bearer },
        body: JSON.stringify({ text: 'generate an image of never ending fog' }),
      });
      const { chatId, runId } = (await res.json()) as { chatId: string; runId: string };
      const snapshot = async () =>
        (await (
          await fetch(`${slowGateway.url}/api/v1/chats/${chatId}/runs/${runId}`, { headers: user.bearer })
        ).json()) as Snapshot;
      await waitFor(async () => ((await snapshot()).toolCalls[0]?.status === 'RUNNING' ? true : undefined), {
        what: 'the tool to start',
      });
      const cancel = await fetch(`${slowGateway.url}/api/v1/chats/${chatId}/runs/${runId}/cancel`, {
        method: 'POST',
        headers: user.bearer,
      });
      assert.equal(cancel.status, 202);
      const done = await waitFor(
        async () => {
          const s = await snapshot();
          return s.status === 'CANCELLED' ? s : undefined;
        },
        { what: 'the run to be cancelled', timeoutMs: 60_000 },
      );
      assert.equal(done.toolCalls[0]?.status, 'FAILED');
    } finally {
      await slowGateway.close();
      await slowWorker.stop();
    }
  });
});
