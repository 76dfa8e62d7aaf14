/**
 * APP_SECRET rotation: the new secret seals, the previous ones still open what they sealed (the
 * first format, without a key id, included), and the reseal step moves everything to the new key.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { openSecret, sealSecret, sealedWithCurrentKey } from '../../core/webhooks/secret-box';
import { resealWebhookSecrets } from '../../core/webhooks/reseal';
import { signedFileUrl, verifyKeySignature } from '../../core/storage/signing';
import { createTestUser } from '../../testkit/users';
import { startGateway } from '../../testkit/gateway';
import { testStack } from '../../testkit/stack';

const secret = () => randomBytes(32).toString('base64url');

/** Sealed by the first format (no key id) under LEGACY_APP_SECRET. */
const LEGACY_APP_SECRET = 'legacy-app-secret-of-at-least-32-characters';
const LEGACY_SEALED = 'v1.E9RxpAQLiEj5CZXs.kNdKE6-l7bo8ZOTiaHWkqQ.B72baKxKVPRMS1BJTigG7fAOmiK2sJI';

describe('APP_SECRET rotation', function () {
  this.timeout(60_000);

  it('seals under the new secret with its key id; the previous secret still opens its own', () => {
    const [oldSecret, newSecret] = [secret(), secret()];
    const before = sealSecret([oldSecret], 'svcwhsec_before');
    const after = sealSecret([newSecret, oldSecret], 'svcwhsec_after');
    assert.equal(before.split('.')[0], 'v2');
    assert.notEqual(before.split('.')[1], after.split('.')[1], 'each key has its own id');
    assert.equal(openSecret([newSecret, oldSecret], before), 'svcwhsec_before');
    assert.equal(openSecret([newSecret, oldSecret], after), 'svcwhsec_after');
    assert.ok(sealedWithCurrentKey([newSecret, oldSecret], after));
    assert.ok(!sealedWithCurrentKey([newSecret, oldSecret], before));
    // Once the old secret is dropped, what it sealed no longer opens.
    assert.throws(() => openSecret([newSecret], before), /not configured/);
  });

  it('opens a value of the first format, without a key id, with any configured secret', () => {
    assert.equal(openSecret([secret(), LEGACY_APP_SECRET], LEGACY_SEALED), 'svcwhsec_legacy-fixture');
    assert.throws(() => openSecret([secret()], LEGACY_SEALED));
  });

  it('keeps file URLs signed before the rotation valid while the old secret is listed', async () => {
    const stack = await testStack();
    const oldConfig = stack.config();
    const rotated = stack.config({ APP_SECRET: secret(), APP_SECRET_PREVIOUS: oldConfig.APP_SECRET });
    const url = new URL(signedFileUrl(oldConfig, 'u/file.png'));
    const [sig, exp] = [url.searchParams.get('sig') ?? '', url.searchParams.get('exp') ?? ''];
    assert.ok(verifyKeySignature(rotated, 'u/file.png', sig, exp));
    assert.ok(!verifyKeySignature(stack.config({ APP_SECRET: secret() }), 'u/file.png', sig, exp));
  });

  it('reseals every endpoint secret under the new APP_SECRET, keeping the secret itself', async () => {
    const stack = await testStack();
    const oldConfig = stack.config();
    const gateway = await startGateway({ config: oldConfig });
    let endpointId: string;
    let plain: string;
    try {
      const user = await createTestUser();
      const res = await fetch(`${gateway.url}/api/webhook-endpoints`, {
        method: 'POST',
        headers: { cookie: user.cookie, origin: gateway.url, 'content-type': 'application/json' },
        body: JSON.stringify({ url: 'https://hooks.example.test/rotate', events: ['agent.completed'] }),
      });
      assert.equal(res.status, 201);
      ({ id: endpointId, secret: plain } = (await res.json()) as { id: string; secret: string });
    } finally {
      await gateway.close();
    }
    const rotated = { APP_SECRET: secret(), APP_SECRET_PREVIOUS: [oldConfig.APP_SECRET] };
    const first = await resealWebhookSecrets(stack.db.pool, rotated);
    assert.ok(first.resealed >= 1);
    const { rows } = await stack.db.pool.query<{ secretEncrypted: string }>(
      'SELECT "secretEncrypted" FROM "WebhookEndpoint" WHERE id = $1',
      [endpointId],
    );
    const sealed = rows[0]?.secretEncrypted ?? '';
    assert.equal(openSecret([rotated.APP_SECRET], sealed), plain);
    const again = await resealWebhookSecrets(stack.db.pool, rotated);
    assert.equal(again.resealed, 0, 'a second run has nothing left to do');
  });
});
