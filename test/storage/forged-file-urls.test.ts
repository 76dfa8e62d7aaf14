import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Config } from '../../core/config/config';
import { signedFileUrl } from '../../core/storage/signing';
import { createTestUser, type TestUser } from '../../testkit/users';
import { startGateway, type TestGateway } from '../../testkit/gateway';
import { testStack } from '../../testkit/stack';
import { startWorker, type TestWorker } from '../../testkit/worker';
import { quadrantImage } from '../support/fake-providers';
import { uploadAttachment } from '../support/uploads';
import { waitFor } from '../support/wait';

const DAY = 24 * 3_600_000;
const PUBLIC_BASE = 'http://93.184.215.14';
/** Every URL of this service's `/files/` in a JSON answer, wherever it sits (text included). */
const FILE_URLS = /https?:\/\/[^\s"\\]+\/files\/[^\s"\\]+/g;

/**
 * Issue 45, finding 1: a file URL given in a turn must never come back signed. User A's file is
 * named in user B's turn by a forged, leaked, expired or retired-secret URL; whatever B then
 * reads (the messages, the run) holds no URL that serves A's bytes. B's own files, written into
 * B's messages by the service, are still signed afresh on every read, however old they are.
 */
describe('file URLs given in a turn', function () {
  this.timeout(120_000);
  let config: Config;
  let gateway: TestGateway;
  let worker: TestWorker;
  let storageDir: string;
  let owner: TestUser;
  let reader: TestUser;
  let ownerFile: { key: string; url: string; bytes: Buffer };

  before(async () => {
    storageDir = await mkdtemp(path.join(tmpdir(), 'forged-urls-'));
    // A public address, as in a deployment: a URL naming it is not refused as a private one. The
    // test reaches the gateway itself at its loopback address (viaGateway).
    config = (await testStack()).config({
      TEMPORAL_TASK_QUEUE: `forged-urls-${randomUUID()}`,
      PUBLIC_BASE_URL: PUBLIC_BASE,
      STORAGE_LOCAL_DIR: storageDir,
      MODEL_PROVIDER: 'local',
      IMAGE_PROVIDER: 'local-preview',
      ALLOW_PRIVATE_NETWORK_URLS: 'false',
    });
    worker = await startWorker({ config });
    gateway = await startGateway({ config });
    owner = await createTestUser();
    reader = await createTestUser();
    const bytes = await quadrantImage(40, 20);
    const uploaded = await upload(owner, bytes);
    ownerFile = { key: uploaded.key, url: uploaded.url, bytes };
  });
  after(async () => {
    await gateway?.close();
    await worker?.stop();
    await rm(storageDir, { recursive: true, force: true });
  });

  const upload = (who: TestUser, bytes: Buffer) => uploadAttachment(gateway, who, bytes);

  const send = async (who: TestUser, body: Record<string, unknown>) => {
    const res = await fetch(`${gateway.url}/api/v1/completions`, {
      method: 'POST',
      headers: { ...who.bearer, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  /** Sends a turn and waits for its run to end; answers everything the user can read of it. */
  async function turn(who: TestUser, body: Record<string, unknown>) {
    const sent = await send(who, body);
    assert.equal(sent.status, 202, JSON.stringify(sent.body));
    const { chatId, runId } = sent.body as { chatId: string; runId: string };
    const get = async (route: string) =>
      (await (await fetch(`${gateway.url}${route}`, { headers: who.bearer })).json()) as Record<
        string,
        unknown
      >;
    const run = await waitFor(
      async () => {
        const r = await get(`/api/v1/chats/${chatId}/runs/${runId}`);
        return ['COMPLETE', 'FAILED', 'CANCELLED'].includes(r.status as string) ? r : undefined;
      },
      { what: 'the run to end', timeoutMs: 60_000 },
    );
    const messages = await get(`/api/v1/chats/${chatId}/messages`);
    return {
      chatId,
      runId,
      run,
      messages,
      read: async () => ({
        run: await get(`/api/v1/chats/${chatId}/runs/${runId}`),
        messages: await get(`/api/v1/chats/${chatId}/messages`),
      }),
    };
  }

  /** A URL of the public address, sent to the gateway's own. */
  const viaGateway = (url: string) => {
    const u = new URL(url);
    return u.origin === PUBLIC_BASE ? `${gateway.url}${u.pathname}${u.search}` : url;
  };

  /** What each file URL in `answer` serves: its status, and whether the bytes are `bytes`. */
  async function served(answer: unknown, bytes: Buffer) {
    const urls = [...new Set(JSON.stringify(answer).match(FILE_URLS) ?? [])];
    return Promise.all(
      urls.map(async (url) => {
        const res = await fetch(viaGateway(url));
        const body = Buffer.from(await res.arrayBuffer());
        return { url, status: res.status, same: body.equals(bytes) };
      }),
    );
  }

  /** The owner's file under every name another user may have come by. */
  const namesOfOwnersFile = () => {
    const files = `${config.PUBLIC_BASE_URL}/files/${ownerFile.key}`;
    const retired = { ...config, APP_SECRET: 'r'.repeat(40) };
    return {
      forged: `${files}?sig=x`,
      'forged, with an expiry': `${files}?exp=9999999999&sig=${'0'.repeat(64)}`,
      leaked: ownerFile.url,
      expired: signedFileUrl(config, ownerFile.key, Date.now() - config.FILE_URL_TTL - DAY),
      'signed under a retired secret': signedFileUrl(retired, ownerFile.key),
    };
  };

  it("never hands a reader a working URL to another user's file named in the turn's text", async () => {
    for (const [name, url] of Object.entries(namesOfOwnersFile())) {
      for (const text of [url, `have a look: ${url} thanks`]) {
        const { run, messages } = await turn(reader, { text });
        // Only the URL as given may serve the file (a leaked URL, until it expires): none made anew.
        const working = (await served({ run, messages }, ownerFile.bytes)).filter(
          (s) => s.status === 200 && s.same && s.url !== url,
        );
        assert.deepEqual(working, [], `${name} in "${text.slice(0, 20)}…" came back signed`);
      }
    }
  });

  it("refuses another user's file URL in image_urls as any URL it will not fetch, writing nothing", async () => {
    const { db } = await testStack();
    const count = async () =>
      (await db.pool.query(`SELECT 1 FROM "Chat" WHERE "userId" = $1`, [reader.userId])).rows.length;
    const chats = await count();
    const privateAnswer = await send(reader, { text: 'look', image_urls: ['http://10.0.0.1/x.png'] });
    assert.equal(privateAnswer.status, 400);
    for (const [name, url] of Object.entries(namesOfOwnersFile())) {
      const res = await send(reader, { text: 'look', image_urls: [url] });
      assert.equal(res.status, 400, `${name}: ${res.status}`);
      assert.deepEqual(res.body, privateAnswer.body, name);
    }
    assert.equal(await count(), chats);
  });

  it("does not renew the reader's own URL given in a turn once it has expired or its secret is retired", async () => {
    const mine = await upload(reader, await quadrantImage(20, 20));
    const own = await (await fetch(viaGateway(mine.url))).arrayBuffer();
    const retired = { ...config, APP_SECRET: 'r'.repeat(40) };
    const stale = {
      expired: signedFileUrl(config, mine.key, Date.now() - config.FILE_URL_TTL - DAY),
      'signed under a retired secret': signedFileUrl(retired, mine.key),
    };
    for (const [name, url] of Object.entries(stale)) {
      const { run, messages } = await turn(reader, { text: url });
      const shown = await served({ run, messages }, Buffer.from(own));
      assert.ok(shown.length > 0, 'the text still holds the URL as written');
      assert.deepEqual(
        shown.filter((s) => s.status === 200),
        [],
        `${name}: renewed`,
      );
    }
  });

  it("signs the reader's own uploads and tool outputs afresh on every read, however old the stored URL", async () => {
    const picture = await quadrantImage(40, 20);
    const mine = await upload(reader, picture);
    const cropped = await turn(reader, { text: 'crop this to the left half', attachmentIds: [mine.id] });
    assert.equal(cropped.run.status, 'COMPLETE', JSON.stringify(cropped.run));
    // The chat as if written long ago, before APP_SECRET was rotated and the old one retired.
    const retired = { ...config, APP_SECRET: 'r'.repeat(40) };
    const files = `${config.PUBLIC_BASE_URL}/files/`;
    const written: string[] = [];
    const aged = (value: unknown) => {
      const json = JSON.stringify(value).replace(FILE_URLS, (url) => {
        if (!url.startsWith(files)) return url;
        const key = decodeURIComponent(new URL(url).pathname.slice('/files/'.length));
        return signedFileUrl(retired, key, Date.now() - 30 * DAY);
      });
      written.push(json);
      return json;
    };
    const { pool } = gateway.deps.db;
    const { rows: stored } = await pool.query<{ id: string; contentBlocks: unknown }>(
      `SELECT id, "contentBlocks" FROM "Message" WHERE "chatId" = $1`,
      [cropped.chatId],
    );
    for (const row of stored)
      await pool.query(`UPDATE "Message" SET "contentBlocks" = $2::jsonb WHERE id = $1`, [
        row.id,
        aged(row.contentBlocks),
      ]);
    const { rows: calls } = await pool.query<{ id: string; result: unknown }>(
      `SELECT id, result FROM "ToolCall" WHERE "runId" = $1`,
      [cropped.runId],
    );
    for (const call of calls)
      await pool.query(`UPDATE "ToolCall" SET result = $2::jsonb WHERE id = $1`, [
        call.id,
        aged(call.result),
      ]);
    const stale = await served(
      written.map((json) => JSON.parse(json) as unknown),
      picture,
    );
    assert.ok(stale.length >= 2, JSON.stringify(stale));
    assert.deepEqual(
      stale.filter((s) => s.status === 200),
      [],
      'the stored URLs no longer work',
    );

    const again = await cropped.read();
    const blocks = (again.messages.data as { contentBlocks: Record<string, unknown>[] }[]).flatMap(
      (m) => m.contentBlocks,
    );
    const attached = blocks.find((b) => b.attachmentId === mine.id) as { url: string } | undefined;
    const bytes = await fetch(viaGateway(attached?.url ?? ''));
    assert.equal(bytes.status, 200, 'the upload stored in the message works again');
    assert.deepEqual(Buffer.from(await bytes.arrayBuffer()), picture);
    const result = blocks.find((b) => b.type === 'tool_result') as { result: { output: { url: string } } };
    assert.equal(
      (await fetch(viaGateway(result.result.output.url))).status,
      200,
      'so does the tool output in it',
    );
    const run = again.run as { toolCalls: { result: { output: { url: string } } }[] };
    assert.equal(
      (await fetch(viaGateway(run.toolCalls[0]?.result.output.url ?? ''))).status,
      200,
      'and in the run',
    );
  });
});
