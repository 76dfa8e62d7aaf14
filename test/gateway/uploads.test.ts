import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { startGateway, type TestGateway } from '../../testkit/gateway';
import { createTestUser, type TestUser } from '../../testkit/users';
import { testStack } from '../../testkit/stack';

interface Part {
  name: string;
  /** The raw Content-Disposition parameters after `name`, e.g. `; filename="a.png"`. */
  disposition?: string;
  contentType?: string;
  data: Buffer | string;
}

/** A hand-built multipart body, for what FormData cannot express (no filename, RFC 8187 names). */
function multipart(parts: Part[], options: { truncate?: boolean } = {}) {
  const boundary = `----test${randomBytes(8).toString('hex')}`;
  const chunks: Buffer[] = [];
  for (const part of parts) {
    const headers = [`Content-Disposition: form-data; name="${part.name}"${part.disposition ?? ''}`];
    if (part.contentType) headers.push(`Content-Type: ${part.contentType}`);
    chunks.push(Buffer.from(`--${boundary}\r\n${headers.join('\r\n')}\r\n\r\n`));
    chunks.push(Buffer.isBuffer(part.data) ? part.data : Buffer.from(part.data));
    chunks.push(Buffer.from('\r\n'));
  }
  if (!options.truncate) chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` };
}

async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((e) => e.isFile()).map((e) => path.join(e.parentPath, e.name));
}

describe('POST /api/v1/uploads and GET /files', () => {
  let gateway: TestGateway;
  let user: TestUser;
  let storageDir: string;
  let uploadTmp: string;
  let previousTmpdir: string | undefined;
  let png: Buffer;

  before(async () => {
    storageDir = await mkdtemp(path.join(tmpdir(), 'svc-test-uploads-'));
    const stack = await testStack();
    gateway = await startGateway({
      config: stack.config({ STORAGE_DRIVER: 'local', STORAGE_LOCAL_DIR: storageDir }),
    });
    // Point os.tmpdir() at a folder of our own (after the shared stack has started, which uses
    // the real one), so the test can prove the upload temp files are removed.
    uploadTmp = await mkdtemp(path.join(tmpdir(), 'svc-test-upload-tmp-'));
    previousTmpdir = process.env.TMPDIR;
    process.env.TMPDIR = uploadTmp;
    user = await createTestUser();
    png = await sharp({ create: { width: 8, height: 6, channels: 3, background: '#3a7' } })
      .png()
      .toBuffer();
  });
  after(async () => {
    if (previousTmpdir === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previousTmpdir;
    await gateway?.close();
    await rm(storageDir, { recursive: true, force: true });
    await rm(uploadTmp, { recursive: true, force: true });
  });

  const upload = (body: FormData | Buffer, headers: Record<string, string> = {}) =>
    fetch(`${gateway.url}/api/v1/uploads`, {
      method: 'POST',
      headers: { ...user.bearer, ...headers },
      body,
    });

  const attachmentCount = async (userId = user.userId) => {
    const { rows } = await gateway.deps.db.pool.query<{ n: string }>(
      'SELECT count(*) AS n FROM "Attachment" WHERE "userId" = $1',
      [userId],
    );
    return Number(rows[0]?.n);
  };

  const localUrl = (url: string) => {
    const u = new URL(url);
    return `${gateway.url}${u.pathname}${u.search}`;
  };

  /** Nothing written: no new row, no new object, and the per-request temp folder is gone. */
  async function assertNothingLeft(rowsBefore: number, objectsBefore: number) {
    assert.equal(await attachmentCount(), rowsBefore);
    assert.equal((await listFiles(path.join(storageDir, 'objects'))).length, objectsBefore);
    // The temp folder is removed when the response closes, a moment after the client has it.
    for (let i = 0; i < 50 && (await readdir(uploadTmp)).length > 0; i++)
      await new Promise((resolve) => setTimeout(resolve, 20));
    assert.deepEqual(await readdir(uploadTmp), []);
  }

  async function expectRefusal(
    send: () => Promise<Response>,
    status: number,
    code: string,
  ): Promise<{ error: string; code: string }> {
    const rowsBefore = await attachmentCount();
    const objectsBefore = (await listFiles(path.join(storageDir, 'objects'))).length;
    const res = await send();
    const body = (await res.json()) as { error: string; code: string };
    assert.equal(res.status, status, JSON.stringify(body));
    assert.equal(body.code, code);
    await assertNothingLeft(rowsBefore, objectsBefore);
    return body;
  }

  async function createChat(userId: string, deleted = false): Promise<string> {
    const id = randomUUID();
    await gateway.deps.db.pool.query(
      `INSERT INTO "Chat" (id, "userId", title, "updatedAt", "deletedAt") VALUES ($1, $2, 'c', now(), $3)`,
      [id, userId, deleted ? new Date() : null],
    );
    return id;
  }

  it('stores a PNG and answers 201 with a durable URL that serves its bytes', async () => {
    const form = new FormData();
    form.append('file', new Blob([png], { type: 'application/octet-stream' }), 'pixel ü.png');
    const res = await upload(form);
    assert.equal(res.status, 201);
    const body = (await res.json()) as {
      attachments: { id: string; filename: string; mimeType: string; status: string; url: string }[];
      chatId: string | null;
    };
    assert.equal(body.chatId, null);
    assert.equal(body.attachments.length, 1);
    const [a] = body.attachments;
    assert.ok(a);
    assert.match(a.id, /^[0-9a-f-]{36}$/);
    assert.equal(a.filename, 'pixel ü.png');
    assert.equal(a.mimeType, 'image/png'); // from the bytes, not the client's octet-stream
    assert.equal(a.status, 'ready');

    const { rows } = await gateway.deps.db.pool.query(
      'SELECT "userId", "chatId", "storageKey", "sizeBytes" FROM "Attachment" WHERE id = $1',
      [a.id],
    );
    assert.equal(rows[0].userId, user.userId);
    assert.equal(rows[0].chatId, null);
    assert.match(rows[0].storageKey, new RegExp(`^attachments/${user.userId}/[0-9a-f-]{36}$`));
    assert.equal(Number(rows[0].sizeBytes), png.length);

    const file = await fetch(localUrl(a.url));
    assert.equal(file.status, 200);
    assert.equal(file.headers.get('content-type'), 'image/png');
    assert.equal(file.headers.get('x-content-type-options'), 'nosniff');
    assert.equal(
      file.headers.get('content-disposition'),
      `inline; filename="pixel _.png"; filename*=UTF-8''pixel%20%C3%BC.png`,
    );
    assert.deepEqual(Buffer.from(await file.arrayBuffer()), png);
    assert.deepEqual(await readdir(uploadTmp), []);
  });

  it('takes several files through `file` (repeated) and `files`, into the caller’s chat', async () => {
    const chatId = await createChat(user.userId);
    const form = new FormData();
    form.append('chatId', chatId);
    form.append('file', new Blob([png]), 'a.png');
    form.append('file', new Blob([png]), 'b.png');
    form.append('files', new Blob([png]), 'c.png');
    const res = await upload(form);
    assert.equal(res.status, 201);
    const body = (await res.json()) as { attachments: { filename: string }[]; chatId: string };
    assert.equal(body.chatId, chatId);
    assert.deepEqual(body.attachments.map((a) => a.filename).sort(), ['a.png', 'b.png', 'c.png']);
    const { rows } = await gateway.deps.db.pool.query(
      'SELECT count(*) AS n FROM "Attachment" WHERE "chatId" = $1',
      [chatId],
    );
    assert.equal(Number(rows[0].n), 3);
  });

  it('names a file whose filename is only whitespace, dots, quotes or control characters `file.<type>`', async () => {
    for (const disposition of [
      `; filename*=UTF-8''%0D%0A%22`,
      '; filename="   "',
      '; filename=" "',
      '; filename="\'\'"',
      '; filename="."',
      '; filename=".."',
      '; filename="a/.."',
      '; filename="a\\.."',
    ]) {
      const { body, contentType } = multipart([
        { name: 'file', disposition, contentType: 'image/png', data: png },
      ]);
      const res = await upload(body, { 'content-type': contentType });
      assert.equal(res.status, 201, disposition);
      const json = (await res.json()) as { attachments: { filename: string; mimeType: string }[] };
      assert.equal(json.attachments[0]?.filename, 'file.png', disposition);
      assert.equal(json.attachments[0]?.mimeType, 'image/png');
    }
    // The same names as a browser's FormData sends them.
    for (const name of ['.', '..', 'a/..', ' ']) {
      const form = new FormData();
      form.append('file', new Blob([png]), name);
      const res = await upload(form);
      assert.equal(res.status, 201, JSON.stringify(name));
      const json = (await res.json()) as { attachments: { filename: string }[] };
      assert.equal(json.attachments[0]?.filename, 'file.png', JSON.stringify(name));
    }
  });

  it('shortens a long filename to 200 characters, keeping its extension', async () => {
    const form = new FormData();
    form.append('file', new Blob([png]), `${'ü'.repeat(300)}.png`);
    form.append('file', new Blob([png]), `${'a'.repeat(250)}.tar.png`);
    const res = await upload(form);
    assert.equal(res.status, 201);
    const names = ((await res.json()) as { attachments: { filename: string }[] }).attachments.map(
      (a) => a.filename,
    );
    assert.deepEqual(names, [`${'ü'.repeat(196)}.png`, `${'a'.repeat(196)}.png`]);
  });

  it('does not take a part without a filename as a file (400 when it is the only one)', async () => {
    const { body, contentType } = multipart([
      { name: 'file', contentType: 'application/octet-stream', data: png },
    ]);
    await expectRefusal(() => upload(body, { 'content-type': contentType }), 400, 'INVALID_REQUEST');
  });

  it('neutralises CR/LF and quotes smuggled into a filename (RFC 8187 form)', async () => {
    const { body, contentType } = multipart([
      {
        name: 'file',
        disposition: `; filename*=UTF-8''..%2F..%2Fevil%22%0D%0ASet-Cookie%3A%20a%3Db.png`,
        contentType: 'image/png',
        data: png,
      },
    ]);
    const res = await upload(body, { 'content-type': contentType });
    assert.equal(res.status, 201);
    const json = (await res.json()) as { attachments: { filename: string; url: string }[] };
    const a = json.attachments[0];
    assert.ok(a);
    assert.equal(a.filename, 'evilSet-Cookie: a=b.png');
    const file = await fetch(localUrl(a.url));
    assert.equal(file.status, 200);
    assert.equal(file.headers.get('set-cookie'), null);
    const disposition = file.headers.get('content-disposition') ?? '';
    assert.doesNotMatch(disposition, /[\r\n]/);
    assert.equal(
      disposition,
      `inline; filename="evilSet-Cookie: a=b.png"; filename*=UTF-8''evilSet-Cookie%3A%20a%3Db.png`,
    );
  });

  it('refuses 9 files with 400 TOO_MANY_FILES and writes nothing', async () => {
    await expectRefusal(
      () => {
        const form = new FormData();
        for (let i = 0; i < 9; i++) form.append(i % 2 ? 'file' : 'files', new Blob([png]), `${i}.png`);
        return upload(form);
      },
      400,
      'TOO_MANY_FILES',
    );
  });

  it('refuses a 21 MB file with 413 PAYLOAD_TOO_LARGE and writes nothing', async () => {
    const big = Buffer.alloc(21 * 1024 * 1024);
    png.copy(big);
    await expectRefusal(
      () => {
        const form = new FormData();
        form.append('file', new Blob([png]), 'small.png');
        form.append('file', new Blob([big]), 'big.png');
        return upload(form);
      },
      413,
      'PAYLOAD_TOO_LARGE',
    );
  });

  it('refuses a text file named .png with 415 and writes nothing, even beside a real image', async () => {
    await expectRefusal(
      () => {
        const form = new FormData();
        form.append('file', new Blob([png]), 'real.png');
        form.append('file', new Blob(['just some text, not an image'], { type: 'image/png' }), 'x.png');
        return upload(form);
      },
      415,
      'UNSUPPORTED_MEDIA_TYPE',
    );
  });

  it('refuses a body that is not multipart with 415', async () => {
    await expectRefusal(
      () => upload(Buffer.from('{"chatId":null}'), { 'content-type': 'application/json' }),
      415,
      'UNSUPPORTED_MEDIA_TYPE',
    );
  });

  it('refuses other file field names (`file[0]`, `files[]`) with 400 INVALID_REQUEST', async () => {
    for (const name of ['file[0]', 'files[]', 'image']) {
      await expectRefusal(
        () => {
          const form = new FormData();
          form.append(name, new Blob([png]), 'a.png');
          return upload(form);
        },
        400,
        'INVALID_REQUEST',
      );
    }
  });

  it('refuses a truncated multipart body with 400 INVALID_REQUEST', async () => {
    const { body, contentType } = multipart(
      [{ name: 'file', disposition: '; filename="a.png"', contentType: 'image/png', data: png }],
      { truncate: true },
    );
    await expectRefusal(() => upload(body, { 'content-type': contentType }), 400, 'INVALID_REQUEST');
  });

  it('refuses an oversized text field with 400 INVALID_REQUEST', async () => {
    await expectRefusal(
      () => {
        const form = new FormData();
        form.append('chatId', 'x'.repeat(65 * 1024));
        form.append('file', new Blob([png]), 'a.png');
        return upload(form);
      },
      400,
      'INVALID_REQUEST',
    );
  });

  it('refuses a request without files with 400 INVALID_REQUEST', async () => {
    await expectRefusal(
      () => {
        const form = new FormData();
        form.append('chatId', randomUUID());
        return upload(form);
      },
      400,
      'INVALID_REQUEST',
    );
  });

  it('answers 404 CHAT_NOT_FOUND for another user’s or a deleted chat, 400 for a non-UUID', async () => {
    const other = await createTestUser();
    for (const chatId of [
      await createChat(other.userId),
      await createChat(user.userId, true),
      randomUUID(),
    ]) {
      await expectRefusal(
        () => {
          const form = new FormData();
          form.append('chatId', chatId);
          form.append('file', new Blob([png]), 'a.png');
          return upload(form);
        },
        404,
        'CHAT_NOT_FOUND',
      );
    }
    assert.equal(await attachmentCount(other.userId), 0);
    await expectRefusal(
      () => {
        const form = new FormData();
        form.append('chatId', 'not-a-uuid');
        form.append('file', new Blob([png]), 'a.png');
        return upload(form);
      },
      400,
      'INVALID_REQUEST',
    );
  });

  it('answers 401 without an API key and stores nothing', async () => {
    await expectRefusal(
      () => {
        const form = new FormData();
        form.append('file', new Blob([png]), 'a.png');
        return fetch(`${gateway.url}/api/v1/uploads`, { method: 'POST', body: form });
      },
      401,
      'UNAUTHORIZED',
    );
  });

  it('documents the route as multipart with its form fields', () => {
    const doc = gateway.routes.document() as unknown as {
      paths: Record<
        string,
        Record<string, { requestBody?: { content: Record<string, { schema: unknown }> } }>
      >;
    };
    const content = doc.paths['/api/v1/uploads']?.post?.requestBody?.content ?? {};
    assert.deepEqual(Object.keys(content), ['multipart/form-data']);
    const schema = JSON.stringify(content['multipart/form-data']?.schema);
    for (const field of ['chatId', 'file', 'files', 'binary']) assert.ok(schema.includes(field), field);
  });
});
