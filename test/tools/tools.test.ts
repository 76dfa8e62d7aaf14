import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import sharp from 'sharp';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createToolsActivities } from '../../activities/tools';
import type { Config } from '../../core/config/config';
import type { ToolResult } from '../../core/schemas/events';
import { toolCallWorkflowId } from '../../workflows/tool-call.contract';
import { createTestUser, type TestUser } from '../../testkit/users';
import {
  animatedImage,
  animatedPng,
  png16,
  QUADRANT_COLOURS,
  quadrantImage,
  startFakePredictionServer,
  startMediaServer,
} from '../support/fake-providers';
import { startGateway, type TestGateway } from '../../testkit/gateway';
import { testStack, type TestStack } from '../../testkit/stack';
import { startWorker, type TestWorker } from '../../testkit/worker';
import { waitFor } from '../support/wait';

type Media = Awaited<ReturnType<typeof startMediaServer>>;
type Prediction = Awaited<ReturnType<typeof startFakePredictionServer>>;

describe('tool routes', function () {
  this.timeout(120_000);
  let storageDir: string;
  let config: Config;
  let gateway: TestGateway;
  let worker: TestWorker;
  let media: Media;
  let prediction: Prediction;
  let user: TestUser;
  let stack: TestStack;

  before(async () => {
    stack = await testStack();
    storageDir = await mkdtemp(path.join(tmpdir(), 'tools-test-'));
    media = await startMediaServer();
    prediction = await startFakePredictionServer({ pollsBeforeDone: 3 });
    config = stack.config({
      STORAGE_LOCAL_DIR: storageDir,
      IMAGE_PROVIDER: 'prediction',
      PREDICTION_API_URL: prediction.url,
      PREDICTION_API_TOKEN: 'test-token',
      PROVIDER_POLL_INTERVAL: '100ms',
    });
    worker = await startWorker({ config });
    gateway = await startGateway({ config });
    user = await createTestUser();
  });
  after(async () => {
    await gateway?.close();
    await worker?.stop();
    await media?.close();
    await prediction?.close();
    await rm(storageDir, { recursive: true, force: true });
  });

  const post = async (gw: TestGateway, tool: string, body: unknown, who: TestUser = user) => {
    const res = await fetch(`${gw.url}/api/v1/tools/${tool}`, {
      method: 'POST',
      headers: { ...who.bearer, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  /** The stored bytes of a result: keys are per tool call, found through the call's row. */
  const latestCall = async (who: TestUser = user) => {
    const { rows } = await gateway.deps.db.pool.query<{ id: string; status: string; error: string | null }>(
      `SELECT id, status, error FROM "ToolCall" WHERE "userId" = $1 ORDER BY "startedAt" DESC LIMIT 1`,
      [who.userId],
    );
    return rows[0];
  };
  const readObject = async (key: string) => {
    const object = await worker.deps.storage.get(key);
    const chunks: Buffer[] = [];
    for await (const c of object.body) chunks.push(c as Buffer);
    return { body: Buffer.concat(chunks), contentType: object.contentType };
  };
  const pixels = async (image: Buffer) =>
    sharp(image).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  const pixelAt = (raw: { data: Buffer; info: { width: number } }, x: number, y: number) => [
    ...raw.data.subarray((y * raw.info.width + x) * 3, (y * raw.info.width + x) * 3 + 3),
  ];

  describe('crop_image', () => {
    let imageUrl: string;
    before(async () => {
      imageUrl = media.add('quadrants.png', await quadrantImage(100, 80), 'image/png');
    });

    it('crops by pixels, exactly', async () => {
      const res = await post(gateway, 'crop_image', {
        image_url: imageUrl,
        x: 50,
        y: 0,
        width: 50,
        height: 40,
      });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      const result = res.body as unknown as ToolResult;
      assert.equal(result.toolName, 'crop_image');
      assert.equal(result.output.provider, 'sharp');
      assert.equal(result.creditCost, '1');
      assert.equal(result.assets[0]?.mimeType, 'image/png');
      const call = await latestCall();
      const { body } = await readObject(`tools/${user.userId}/${call?.id}/cropped.png`);
      const raw = await pixels(body);
      assert.deepEqual([raw.info.width, raw.info.height], [50, 40]);
      for (const [x, y] of [
        [0, 0],
        [49, 0],
        [0, 39],
        [49, 39],
      ] as const) {
        assert.deepEqual(pixelAt(raw, x, y), [...QUADRANT_COLOURS.topRight]);
      }
    });

    const charges = async (toolCallId: string) =>
      (
        await gateway.deps.db.pool.query(`SELECT 1 FROM "CreditLedgerEntry" WHERE "toolCallId" = $1`, [
          toolCallId,
        ])
      ).rowCount;
    const workflowOf = (toolCallId: string | undefined) =>
      stack.temporal.client.workflow.getHandle(toolCallWorkflowId(toolCallId ?? ''));

    /** A 10×10 crop of the image's corner through `gw`, answered 200: its call, and the call's workflow. */
    const cropCorner = async (gw: TestGateway) => {
      const res = await post(gw, 'crop_image', { image_url: imageUrl, x: 0, y: 0, width: 10, height: 10 });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      const call = await latestCall();
      return { res, call, handle: workflowOf(call?.id) };
    };

    it("runs on the worker inside the call's one workflow task (a local activity), named for operators", async () => {
      const { call, handle } = await cropCorner(gateway);
      // The route answers once the call's row records its success, before its workflow ends.
      await handle.result();
      const history = await handle.fetchHistory();
      const events = history.events ?? [];
      assert.equal(
        events.filter((e) => e.activityTaskScheduledEventAttributes).length,
        0,
        'no activity task',
      );
      assert.equal(
        events.filter((e) => e.workflowTaskCompletedEventAttributes).length,
        1,
        'one workflow task',
      );
      const crops = events.filter(
        (e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity',
      );
      assert.equal(crops.length, 1);
      const summary = crops[0]?.userMetadata?.summary?.data;
      assert.equal(JSON.parse(Buffer.from(summary ?? []).toString('utf8')), `crop_image (${call?.id})`);
    });

    it('answers as soon as the call records its success, without waiting for its workflow to end', async () => {
      // The worker holds the call right after recording its success: its workflow cannot end
      // until the hold is over, so an answer that came meanwhile came from the call's row.
      const held: Config = {
        ...config,
        TEMPORAL_TASK_QUEUE: `tools-held-${randomUUID()}`,
        FAULT_PAUSE_AT: ['tool-recorded'],
        FAULT_PAUSE_FOR: 5_000,
      };
      const heldWorker = await startWorker({ config: held });
      const heldGateway = await startGateway({ config: held });
      try {
        const { res, handle } = await cropCorner(heldGateway);
        assert.equal((await handle.describe()).status.name, 'RUNNING', 'answered before the workflow ended');
        // The answer is the workflow's result.
        assert.deepEqual(res.body, await handle.result());
      } finally {
        await heldGateway.close();
        await heldWorker.stop();
      }
    });

    it('charges and announces nothing for a crop answered 504 TIMEOUT; its keyed retry is charged once', async () => {
      const impatient = await startGateway({ config: { ...config, TOOL_ROUTE_TIMEOUT: 5_000 } });
      // The first fetch of the image takes 7 s: the crop outlives the route's 5 s window.
      const image = await quadrantImage(100, 80);
      let fetches = 0;
      const slow = createServer((_req, res) => {
        fetches += 1;
        const serve = () => {
          if (!res.destroyed)
            res.writeHead(200, { 'content-type': 'image/png', 'content-length': image.length }).end(image);
        };
        if (fetches === 1) setTimeout(serve, 7_000);
        else serve();
      });
      await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
      const who = await createTestUser();
      try {
        const hook = await fetch(`${impatient.url}/api/webhook-endpoints`, {
          method: 'POST',
          headers: { cookie: who.cookie, 'content-type': 'application/json' },
          body: JSON.stringify({ url: 'http://127.0.0.1:9/hook', events: ['tool.completed'] }),
        });
        assert.equal(hook.status, 201);
        const keyed = async () => {
          const res = await fetch(`${impatient.url}/api/v1/tools/crop_image`, {
            method: 'POST',
            headers: { ...who.bearer, 'content-type': 'application/json', 'idempotency-key': 'slow-crop' },
            body: JSON.stringify({
              image_url: `http://127.0.0.1:${(slow.address() as AddressInfo).port}/slow.png`,
              ...{ x: 0, y: 0, width: 10, height: 10 },
            }),
          });
          return { status: res.status, body: (await res.json()) as Record<string, unknown> };
        };
        const { pool } = gateway.deps.db;
        const balance = async () =>
          (
            await pool.query<{ creditBalance: string }>(
              `SELECT "creditBalance"::text AS "creditBalance" FROM "User" WHERE id = $1`,
              [who.userId],
            )
          ).rows[0]?.creditBalance;
        const before = await balance();

        const timedOut = await keyed();
        assert.equal(timedOut.status, 504, JSON.stringify(timedOut.body));
        assert.equal(timedOut.body.code, 'TIMEOUT');
        const first = await latestCall(who);
        // The crop has run to its end (its workflow closed) and its row is settled.
        await workflowOf(first?.id)
          .result()
          .catch(() => undefined);
        await waitFor(
          async () => {
            const { rows } = await pool.query<{ status: string }>(
              `SELECT status FROM "ToolCall" WHERE id = $1`,
              [first?.id],
            );
            return rows[0]?.status === 'RUNNING' ? undefined : rows[0];
          },
          { what: 'the timed-out call to settle' },
        );
        const announced = async () =>
          (
            await pool.query(
              `SELECT d.payload FROM "WebhookDelivery" d JOIN "WebhookEndpoint" e ON e.id = d."endpointId"
                WHERE e."userId" = $1 AND d.event = 'tool.completed'`,
              [who.userId],
            )
          ).rowCount;
        assert.equal((await latestCall(who))?.status, 'FAILED', 'the call answered 504 did not succeed');
        assert.equal(await charges(first?.id ?? ''), 0, 'nor was it charged');
        assert.equal(await balance(), before, 'its reservation was given back');
        assert.equal(await announced(), 0, 'nor was it announced');

        const retried = await keyed();
        assert.equal(retried.status, 200, JSON.stringify(retried.body));
        const { rows: ledger } = await pool.query(`SELECT 1 FROM "CreditLedgerEntry" WHERE "userId" = $1`, [
          who.userId,
        ]);
        assert.equal(ledger.length, 1, 'the retry is the one call charged');
        assert.equal(await announced(), 1, 'and the one announced');
      } finally {
        slow.closeAllConnections();
        slow.close();
        await impatient.close();
      }
    });

    it('crops by percent, rounding outward', async () => {
      // 10.5% of 100 px is 10.5: left floors to 10; right (10.5 + 39.6 = 50.1%) ceils to 51.
      const res = await post(gateway, 'crop_image', {
        image_url: imageUrl,
        x_percent: 10.5,
        y_percent: 50,
        width_percent: 39.6,
        height_percent: 50,
      });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      const call = await latestCall();
      const raw = await pixels((await readObject(`tools/${user.userId}/${call?.id}/cropped.png`)).body);
      assert.deepEqual([raw.info.width, raw.info.height], [41, 40]);
      assert.deepEqual(pixelAt(raw, 0, 0), [...QUADRANT_COLOURS.bottomLeft]);
      assert.deepEqual(pixelAt(raw, 39, 39), [...QUADRANT_COLOURS.bottomLeft]);
      assert.deepEqual(pixelAt(raw, 40, 39), [...QUADRANT_COLOURS.bottomRight]);
    });

    it('crops by a crop object, keeping WebP', async () => {
      const webpUrl = media.add('quadrants.webp', await quadrantImage(100, 80, 'webp'), 'image/webp');
      const res = await post(gateway, 'crop_image', {
        image_url: webpUrl,
        crop: { x: 25, y: 20, width: 50, height: 40 },
      });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal((res.body as unknown as ToolResult).assets[0]?.mimeType, 'image/webp');
      const call = await latestCall();
      const raw = await pixels((await readObject(`tools/${user.userId}/${call?.id}/cropped.webp`)).body);
      assert.deepEqual([raw.info.width, raw.info.height], [50, 40]);
      // WebP output is lossy: each corner only has to be close to its quadrant's colour.
      const near = (actual: number[], expected: readonly number[]) =>
        assert.ok(
          actual.every((v, i) => Math.abs(v - (expected[i] ?? 0)) <= 12),
          `${actual} vs ${expected}`,
        );
      near(pixelAt(raw, 0, 0), QUADRANT_COLOURS.topLeft);
      near(pixelAt(raw, 49, 0), QUADRANT_COLOURS.topRight);
      near(pixelAt(raw, 0, 39), QUADRANT_COLOURS.bottomLeft);
      near(pixelAt(raw, 49, 39), QUADRANT_COLOURS.bottomRight);
    });

    it('crops an attachment of the caller, and refuses one of another user', async () => {
      const attachmentId = randomUUID();
      const key = `uploads/${user.userId}/${attachmentId}/q.png`;
      const body = await quadrantImage(100, 80);
      await worker.deps.storage.put(key, body, { contentType: 'image/png' });
      await gateway.deps.db.pool.query(
        `INSERT INTO "Attachment" (id, "userId", "storageKey", filename, "mimeType", "sizeBytes") VALUES ($1, $2, $3, 'q.png', 'image/png', $4)`,
        [attachmentId, user.userId, key, body.length],
      );
      const ok = await post(gateway, 'crop_image', { attachmentId, x: 0, y: 40, width: 10, height: 10 });
      assert.equal(ok.status, 200, JSON.stringify(ok.body));
      const stranger = await createTestUser();
      const refused = await post(
        gateway,
        'crop_image',
        { attachmentId, x: 0, y: 40, width: 10, height: 10 },
        stranger,
      );
      assert.equal(refused.status, 404);
      assert.equal(refused.body.code, 'ATTACHMENT_NOT_FOUND');
    });

    it('crops in the upright image of an EXIF-rotated JPEG', async () => {
      // Stored 100x80 with orientation 6 (a quarter turn): the image the user sees is 80x100.
      const rotated = await sharp(await quadrantImage(100, 80, 'jpeg'))
        .withMetadata({ orientation: 6 })
        .jpeg()
        .toBuffer();
      const url = media.add('rotated.jpg', rotated, 'image/jpeg');
      const ok = await post(gateway, 'crop_image', { image_url: url, x: 0, y: 0, width: 80, height: 100 });
      assert.equal(ok.status, 200, JSON.stringify(ok.body));
      assert.equal((ok.body as unknown as ToolResult).assets[0]?.mimeType, 'image/jpeg');
      const call = await latestCall();
      const meta = await sharp(
        (await readObject(`tools/${user.userId}/${call?.id}/cropped.jpg`)).body,
      ).metadata();
      assert.deepEqual([meta.width, meta.height], [80, 100]);
      const outside = await post(gateway, 'crop_image', {
        image_url: url,
        x: 0,
        y: 0,
        width: 100,
        height: 80,
      });
      assert.equal(outside.status, 400);
      assert.equal(outside.body.code, 'INVALID_RECTANGLE');
    });

    it('answers 400 INVALID_RECTANGLE for a missing, partial, doubled or outside rectangle', async () => {
      for (const body of [
        { image_url: imageUrl },
        { image_url: imageUrl, x: 1, y: 1, width: 10 },
        { image_url: imageUrl, x: 1, y: 1, width: 10, height: 10, crop: { x: 0, y: 0, width: 5, height: 5 } },
        { image_url: imageUrl, x: 60, y: 0, width: 50, height: 10 },
      ]) {
        const res = await post(gateway, 'crop_image', body);
        assert.equal(res.status, 400, JSON.stringify(body));
        assert.equal(res.body.code, 'INVALID_RECTANGLE', JSON.stringify(res.body));
      }
    });

    it('refuses a bad rectangle in any form with 400 INVALID_RECTANGLE before any work', async () => {
      const url = media.add('400x300.png', await quadrantImage(400, 300));
      const refused = [
        // Percent past the right or the bottom edge: outside whatever the image's size.
        { x_percent: 80, y_percent: 0, width_percent: 50, height_percent: 10 },
        { x_percent: 0, y_percent: 90, width_percent: 10, height_percent: 20 },
        // Empty or negative, in each form.
        { x: 0, y: 0, width: 0, height: 10 },
        { x: -1, y: 0, width: 10, height: 10 },
        { x_percent: 0, y_percent: 0, width_percent: 0, height_percent: 10 },
        { x_percent: -5, y_percent: 0, width_percent: 10, height_percent: 10 },
        { crop: { x: 0, y: 0, width: 10, height: 0 } },
        // Not whole pixels, or not numbers.
        { x: 0.5, y: 0, width: 10, height: 10 },
        { x: '1', y: 0, width: 10, height: 10 },
      ];
      const before = await latestCall();
      for (const rectangle of refused) {
        const res = await post(gateway, 'crop_image', { image_url: url, ...rectangle });
        assert.equal(res.status, 400, JSON.stringify(rectangle));
        assert.equal(res.body.code, 'INVALID_RECTANGLE', JSON.stringify({ rectangle, body: res.body }));
      }
      // Refused before any work: no call, so nothing fetched and nothing charged.
      assert.deepEqual(await latestCall(), before);
      assert.equal(media.hits(url), 0);
      // Inside the image each form is taken; 33.3 + 66.7 percent is the whole width.
      for (const rectangle of [
        { x: 200, y: 0, width: 200, height: 10 },
        { x_percent: 33.3, y_percent: 0, width_percent: 66.7, height_percent: 100 },
        { crop: { x: 0, y: 290, width: 400, height: 10 } },
      ]) {
        const res = await post(gateway, 'crop_image', { image_url: url, ...rectangle });
        assert.equal(res.status, 200, JSON.stringify({ rectangle, body: res.body }));
      }
    });

    it('refuses pixels past the image, known once it is read, with 400 INVALID_RECTANGLE, charging nothing', async () => {
      const url = media.add('small.png', await quadrantImage(40, 30));
      for (const rectangle of [
        { x: 30, y: 0, width: 20, height: 10 },
        { crop: { x: 0, y: 25, width: 10, height: 10 } },
      ]) {
        const hits = media.hits(url);
        const res = await post(gateway, 'crop_image', { image_url: url, ...rectangle });
        assert.equal(res.status, 400, JSON.stringify(rectangle));
        assert.equal(res.body.code, 'INVALID_RECTANGLE');
        assert.match(String(res.body.error), /40x30/);
        const call = await latestCall();
        assert.equal(call?.status, 'FAILED');
        const { rows } = await gateway.deps.db.pool.query(
          `SELECT 1 FROM "CreditLedgerEntry" WHERE "toolCallId" = $1`,
          [call?.id],
        );
        assert.equal(rows.length, 0, 'no charge');
        assert.equal(media.hits(url), hits + 1, 'fetched once');
      }
    });

    for (const format of ['webp', 'gif'] as const) {
      it(`crops every frame of an animated ${format.toUpperCase()}, keeping its format and timing`, async () => {
        const colours = [
          [255, 0, 0],
          [0, 0, 255],
          [0, 255, 0],
        ] as const;
        const url = media.add(`animated.${format}`, await animatedImage(format, 40, 30, colours, 120));
        const res = await post(gateway, 'crop_image', { image_url: url, x: 10, y: 5, width: 20, height: 10 });
        assert.equal(res.status, 200, JSON.stringify(res.body));
        const result = res.body as unknown as ToolResult;
        assert.equal(result.assets[0]?.mimeType, `image/${format}`);
        assert.equal(result.output.frames, 3);
        const call = await latestCall();
        const { body } = await readObject(`tools/${user.userId}/${call?.id}/cropped.${format}`);
        const meta = await sharp(body, { animated: true }).metadata();
        assert.equal(meta.format, format);
        assert.equal(meta.pages, 3);
        assert.deepEqual([meta.width, meta.pageHeight ?? meta.height], [20, 10]);
        assert.deepEqual(meta.delay, [120, 120, 120]);
        for (const [page, colour] of colours.entries()) {
          const frame = await sharp(body, { page }).removeAlpha().raw().toBuffer();
          // WebP output is lossy: each frame only has to be close to its colour.
          const pixel = [...frame.subarray(0, 3)];
          assert.ok(
            pixel.every((v, i) => Math.abs(v - (colour[i] ?? 0)) <= 12),
            `frame ${page}: ${pixel} vs ${colour}`,
          );
        }
      });
    }

    it('keeps the 16 bits of a 16-bit PNG', async () => {
      const source = await png16(60, 40);
      assert.equal((await sharp(source).metadata()).depth, 'ushort', 'the input is 16-bit');
      const url = media.add('deep.png', source);
      const res = await post(gateway, 'crop_image', { image_url: url, x: 10, y: 5, width: 30, height: 20 });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      const call = await latestCall();
      const { body } = await readObject(`tools/${user.userId}/${call?.id}/cropped.png`);
      const meta = await sharp(body).metadata();
      assert.deepEqual([meta.depth, meta.width, meta.height], ['ushort', 30, 20]);
      const samples = (image: sharp.Sharp) =>
        image.toColourspace('rgb16').raw({ depth: 'ushort' }).toBuffer();
      const expected = await samples(sharp(source).extract({ left: 10, top: 5, width: 30, height: 20 }));
      assert.ok((await samples(sharp(body))).equals(expected), 'the same 16-bit samples');
    });

    it('refuses with 415 an image whose frames it cannot keep: multi-page TIFF, animated PNG', async () => {
      const frames = await animatedImage('webp', 20, 10, [
        [255, 0, 0],
        [0, 0, 255],
      ]);
      const tiff = await sharp(frames, { animated: true }).tiff().toBuffer();
      assert.equal((await sharp(tiff).metadata()).pages, 2, 'the TIFF has two pages');
      for (const [url, message] of [
        [media.add('pages.tiff', tiff), /2 pages; only animated WebP and GIF/],
        [media.add('animated.png', await animatedPng(20, 10)), /animated PNG/],
      ] as const) {
        const res = await post(gateway, 'crop_image', { image_url: url, x: 0, y: 0, width: 5, height: 5 });
        assert.equal(res.status, 415, JSON.stringify(res.body));
        assert.equal(res.body.code, 'UNSUPPORTED_MEDIA_TYPE');
        assert.match(String(res.body.error), message);
        assert.equal(media.hits(url), 1, 'fetched once');
        assert.equal((await latestCall())?.status, 'FAILED');
      }
    });

    it('answers 422 MEDIA_UNAVAILABLE when the image URL cannot be fetched, charging nothing', async () => {
      const closed = createServer();
      await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
      const { port } = closed.address() as AddressInfo;
      await new Promise((resolve) => closed.close(resolve));
      const missing = imageUrl.replace('quadrants.png', 'missing.png');
      for (const url of [missing, `http://127.0.0.1:${port}/gone.png`]) {
        const res = await post(gateway, 'crop_image', { image_url: url, x: 0, y: 0, width: 1, height: 1 });
        assert.equal(res.status, 422, url);
        assert.equal(res.body.code, 'MEDIA_UNAVAILABLE');
        assert.match(String(res.body.error), /could not be fetched/);
        const call = await latestCall();
        assert.equal(call?.status, 'FAILED');
        const { rows } = await gateway.deps.db.pool.query(
          `SELECT 1 FROM "CreditLedgerEntry" WHERE "toolCallId" = $1`,
          [call?.id],
        );
        assert.equal(rows.length, 0, 'no charge');
      }
    });

    it('answers 400 INVALID_REQUEST for other bad input', async () => {
      const res = await post(gateway, 'crop_image', {
        image_url: 'ftp://x/y.png',
        x: 0,
        y: 0,
        width: 1,
        height: 1,
      });
      assert.equal(res.status, 400);
      assert.equal(res.body.code, 'INVALID_REQUEST');
    });
  });

  describe('ai_image_2 on a prediction provider', () => {
    it('polls until the prediction succeeds and stores the image', async () => {
      const res = await post(gateway, 'ai_image_2', {
        prompt: 'a green square',
        aspect_ratio: '16:9',
        seed: 7,
      });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      const result = res.body as unknown as ToolResult;
      assert.equal(result.output.provider, 'prediction');
      assert.match(result.providerRunId, /^pred-\d+$/);
      assert.equal(result.creditCost, '10');
      assert.equal(prediction.predictions.get(result.providerRunId)?.polls, 3);
      const created = prediction.created.at(-1);
      assert.equal(created?.authorization, 'Bearer test-token');
      assert.deepEqual((created?.body as { input: unknown }).input, {
        prompt: 'a green square',
        aspect_ratio: '16:9',
        seed: 7,
      });
      const call = await latestCall();
      const stored = await readObject(`tools/${user.userId}/${call?.id}/image-1.png`);
      assert.ok(stored.body.equals(prediction.image), 'the provider image is copied into storage');
      const ledger = await gateway.deps.db.pool.query(
        `SELECT amount::text FROM "CreditLedgerEntry" WHERE "toolCallId" = $1`,
        [call?.id],
      );
      assert.deepEqual(ledger.rows, [{ amount: '10.0000' }]);
    });

    it('retries a provider 5xx and charges once', async () => {
      const res = await post(gateway, 'ai_image_2', { prompt: 'flaky but fine' });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      const creations = prediction.created.filter(
        (c) => (c.body as { input: { prompt: string } }).input.prompt === 'flaky but fine',
      );
      assert.equal(creations.length, 2);
      const call = await latestCall();
      const ledger = await gateway.deps.db.pool.query(
        `SELECT 1 FROM "CreditLedgerEntry" WHERE "toolCallId" = $1`,
        [call?.id],
      );
      assert.equal(ledger.rowCount, 1);
    });

    it('answers 502 PROVIDER_ERROR when the prediction fails, and charges nothing', async () => {
      const res = await post(gateway, 'ai_image_2', { prompt: 'fail please' });
      assert.equal(res.status, 502);
      assert.equal(res.body.code, 'PROVIDER_ERROR');
      const call = await latestCall();
      assert.equal(call?.status, 'FAILED');
      // The provider's own words ('the model refused') go to the log, not to the client.
      assert.doesNotMatch(JSON.stringify(res.body), /model refused/);
      assert.doesNotMatch(call?.error ?? '', /model refused/);
      const ledger = await gateway.deps.db.pool.query(
        `SELECT 1 FROM "CreditLedgerEntry" WHERE "toolCallId" = $1`,
        [call?.id],
      );
      assert.equal(ledger.rowCount, 0);
    });

    it('gives an assistant the same PROVIDER_ERROR as a tool result over MCP, and charges nothing', async () => {
      const assistant = new Client({ name: 'tools-test', version: '1.0.0' });
      await assistant.connect(
        new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp`), {
          requestInit: { headers: user.bearer },
        }),
      );
      try {
        await assistant.listTools();
        const result = (await assistant.callTool({
          name: 'ai_image_2',
          arguments: { prompt: 'fail please' },
        })) as CallToolResult;
        assert.equal(result.isError, true);
        assert.equal((result.structuredContent as { code: string }).code, 'PROVIDER_ERROR');
        assert.doesNotMatch(JSON.stringify(result), /model refused/);
        const call = await latestCall();
        assert.equal(call?.status, 'FAILED');
        const ledger = await gateway.deps.db.pool.query(
          `SELECT 1 FROM "CreditLedgerEntry" WHERE "toolCallId" = $1`,
          [call?.id],
        );
        assert.equal(ledger.rowCount, 0);
      } finally {
        await assistant.close();
      }
    });

    it('answers 502 PROVIDER_ERROR when the provider refuses the job (4xx)', async () => {
      const res = await post(gateway, 'ai_image_2', { prompt: 'reject this' });
      assert.equal(res.status, 502);
      assert.equal(res.body.code, 'PROVIDER_ERROR');
    });

    it('answers 504 TIMEOUT past TOOL_ROUTE_TIMEOUT, ends the call and cancels the provider job', async () => {
      const impatient = await startGateway({ config: { ...config, TOOL_ROUTE_TIMEOUT: 3_000 } });
      try {
        const started = Date.now();
        const res = await post(impatient, 'ai_image_2', { prompt: 'never finishes' });
        assert.equal(res.status, 504);
        assert.equal(res.body.code, 'TIMEOUT');
        assert.ok(Date.now() - started < 10_000);
        // The activity learns of the cancellation from a heartbeat's answer; heartbeats are
        // throttled to 80% of the 30 s heartbeat timeout.
        const cancelled = () =>
          [...prediction.predictions.values()].some((p) => p.behaviour === 'never' && p.canceled);
        const deadline = Date.now() + 45_000;
        while (!cancelled() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
        assert.ok(cancelled(), 'the provider job is cancelled');
        const call = await latestCall();
        assert.equal(call?.status, 'FAILED');
        assert.equal(call?.error, 'The tool did not finish in time.');
      } finally {
        await impatient.close();
      }
    });

    it('answers 503 PROVIDER_NOT_CONFIGURED without a provider', async () => {
      const bare = await startGateway({ config: { ...config, IMAGE_PROVIDER: 'none' } });
      try {
        const res = await post(bare, 'ai_image_2', { prompt: 'anything' });
        assert.equal(res.status, 503);
        assert.equal(res.body.code, 'PROVIDER_NOT_CONFIGURED');
      } finally {
        await bare.close();
      }
    });
  });

  it('emits tool.completed for a successful call', async () => {
    const received: { event: string | undefined; body: { id: string; data: Record<string, unknown> } }[] = [];
    const receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received.push({
          event: req.headers['x-svc-event'] as string,
          body: JSON.parse(Buffer.concat(chunks).toString()),
        });
        res.end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    try {
      const hookUser = await createTestUser();
      const created = await fetch(`${gateway.url}/api/webhook-endpoints`, {
        method: 'POST',
        headers: { cookie: hookUser.cookie, 'content-type': 'application/json' },
        body: JSON.stringify({
          url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`,
          events: ['tool.completed'],
        }),
      });
      assert.equal(created.status, 201);
      const imageUrl = media.add('hook.png', await quadrantImage(10, 10));
      const res = await post(
        gateway,
        'crop_image',
        { image_url: imageUrl, x: 0, y: 0, width: 2, height: 2 },
        hookUser,
      );
      assert.equal(res.status, 200);
      const call = await latestCall(hookUser);
      const deadline = Date.now() + 15_000;
      while (received.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      assert.equal(received.length, 1);
      assert.equal(received[0]?.event, 'tool.completed');
      assert.match(received[0]?.body.id ?? '', new RegExp(`:tool.completed:${call?.id}$`));
      assert.equal(received[0]?.body.data.toolName, 'crop_image');
      assert.equal(received[0]?.body.data.toolCallId, call?.id);
      assert.deepEqual(received[0]?.body.data.output, res.body.output);
    } finally {
      receiver.closeAllConnections();
      receiver.close();
    }
  });

  it('answers 404 UNKNOWN_TOOL for any other tool name', async () => {
    const res = await post(gateway, 'resize_image', {});
    assert.equal(res.status, 404);
    assert.equal(res.body.code, 'UNKNOWN_TOOL');
  });

  it('answers 401 without an API key', async () => {
    const res = await fetch(`${gateway.url}/api/v1/tools/crop_image`, { method: 'POST' });
    assert.equal(res.status, 401);
  });

  it('documents every tool route in OpenAPI, and no operation that only refuses', () => {
    const doc = gateway.routes.document() as { paths: Record<string, unknown> };
    assert.deepEqual(
      Object.keys(doc.paths).filter((p) => p.startsWith('/api/v1/tools/')),
      ['/api/v1/tools/crop_image', '/api/v1/tools/ai_image_2', '/api/v1/tools/merge_videos'],
    );
  });

  it('runTool charges exactly once, however often it runs', async () => {
    const activities = createToolsActivities(worker.deps);
    const input = {
      toolCallId: randomUUID(),
      toolName: 'crop_image',
      input: {
        image_url: media.add('once.png', await quadrantImage(20, 20)),
        x: 0,
        y: 0,
        width: 5,
        height: 5,
      },
      userId: user.userId,
    };
    const env = new MockActivityEnvironment();
    const first = await env.run(activities.runTool, input);
    const second = await new MockActivityEnvironment().run(activities.runTool, input);
    assert.deepEqual(second, first);
    const { rows } = await gateway.deps.db.pool.query(
      `SELECT amount::text FROM "CreditLedgerEntry" WHERE "toolCallId" = $1`,
      [input.toolCallId],
    );
    assert.deepEqual(rows, [{ amount: '1.0000' }]);
  });
});
