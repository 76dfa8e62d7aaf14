import assert from 'node:assert/strict';
import { PutBucketPolicyCommand, S3Client } from '@aws-sdk/client-s3';
import { createStorage } from '../../core/storage';
import { startMinio, type MinioServer } from '../support/minio';
import { testStack } from '../../testkit/stack';
import { storageContract } from './contract';

// No skip when MinIO is missing: scripts/minio.sh builds it, and a missing server must fail loudly.
storageContract('s3', async () => {
  const minio = await startMinio();
  return { env: minio.env, teardown: () => minio.stop() };
});

describe('s3 storage with ASSET_PUBLIC_BASE_URL', () => {
  let minio: MinioServer;
  before(async () => {
    minio = await startMinio();
  });
  after(() => minio?.stop());

  it('answers the public object URL, which serves the object straight from the bucket', async () => {
    const client = new S3Client({
      endpoint: minio.endpoint,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: minio.accessKeyId, secretAccessKey: minio.secretAccessKey },
    });
    const policy = {
      Version: '2012-10-17',
      Statement: [
        {
          Effect: 'Allow',
          Principal: { AWS: ['*'] },
          Action: ['s3:GetObject'],
          Resource: [`arn:aws:s3:::${minio.bucket}/*`],
        },
      ],
    };
    await client.send(new PutBucketPolicyCommand({ Bucket: minio.bucket, Policy: JSON.stringify(policy) }));
    client.destroy();

    const publicBase = `${minio.endpoint}/${minio.bucket}`;
    const storage = createStorage(
      (await testStack()).config({ ...minio.env, ASSET_PUBLIC_BASE_URL: `${publicBase}/` }),
    );
    const key = 'assets/x y/ü.webp';
    await storage.put(key, Buffer.from('RIFF....WEBP'), { contentType: 'image/webp' });
    const url = storage.url(key);
    assert.equal(url, `${publicBase}/assets/x%20y/%C3%BC.webp`);
    const res = await fetch(url);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'image/webp');
    assert.equal(await res.text(), 'RIFF....WEBP');
  });
});
