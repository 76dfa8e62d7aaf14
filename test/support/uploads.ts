import assert from 'node:assert/strict';
import type { TestGateway } from '../../testkit/gateway';
import type { TestUser } from '../../testkit/users';

/** Uploads `bytes` as one attachment of `who`: its id, its URL, and the key it is stored under. */
export async function uploadAttachment(
  gateway: TestGateway,
  who: TestUser,
  bytes: Buffer,
  filename = 'picture.png',
): Promise<{ id: string; url: string; key: string }> {
  const form = new FormData();
  form.append('file', new Blob([bytes]), filename);
  const res = await fetch(`${gateway.url}/api/v1/uploads`, {
    method: 'POST',
    headers: who.bearer,
    body: form,
  });
  assert.equal(res.status, 201, await res.clone().text());
  const attachment = ((await res.json()) as { attachments: { id: string; url: string }[] }).attachments[0];
  assert.ok(attachment);
  const { rows } = await gateway.deps.db.pool.query<{ storageKey: string }>(
    `SELECT "storageKey" FROM "Attachment" WHERE id = $1`,
    [attachment.id],
  );
  return { id: attachment.id, url: attachment.url, key: rows[0]?.storageKey ?? '' };
}
