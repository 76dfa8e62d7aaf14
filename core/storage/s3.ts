import { randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  NoSuchKey,
  NotFound,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import type { Config } from '../config/config';
import { ObjectNotFoundError, assertValidKey, encodeKeyPath } from './keys';
import { signedFileUrl } from './signing';
import type { ByteRange, ObjectInfo, ObjectStorage, PutOptions } from './storage';

function requireSetting(value: string | undefined, name: string): string {
  if (!value) throw new Error(`${name} is required when STORAGE_DRIVER=s3`);
  return value;
}

function describe(
  out: { ContentType?: string; ETag?: string; LastModified?: Date },
  size: number,
): ObjectInfo {
  return {
    contentType: out.ContentType ?? 'application/octet-stream',
    size,
    etag: out.ETag ?? `"${size.toString(16)}"`,
    lastModified: out.LastModified ?? new Date(0),
  };
}

/** S3's "no such key" (GetObject's NoSuchKey, HeadObject's bare 404) as ObjectNotFoundError. */
function notFound(err: unknown, key: string): unknown {
  if (
    err instanceof NoSuchKey ||
    err instanceof NotFound ||
    (err instanceof S3ServiceException && err.$metadata.httpStatusCode === 404)
  )
    return new ObjectNotFoundError(key);
  return err;
}

/**
 * Objects in an S3 bucket (AWS or any S3-compatible server). PutObject needs the length up
 * front, so a stream of unknown length is spooled to a temp file first; that keeps memory flat
 * and avoids the multipart-upload helper for files that are at most tens of megabytes.
 */
export function createS3Storage(config: Config): ObjectStorage {
  const bucket = requireSetting(config.S3_BUCKET, 'S3_BUCKET');
  const client = new S3Client({
    region: config.S3_REGION,
    ...(config.S3_ENDPOINT ? { endpoint: config.S3_ENDPOINT } : {}),
    forcePathStyle: config.S3_FORCE_PATH_STYLE,
    credentials: {
      accessKeyId: requireSetting(config.S3_ACCESS_KEY_ID, 'S3_ACCESS_KEY_ID'),
      secretAccessKey: requireSetting(config.S3_SECRET_ACCESS_KEY, 'S3_SECRET_ACCESS_KEY'),
    },
    // Checksums only where S3 demands them: a default CRC over a stream body switches the SDK to
    // aws-chunked trailers, which not every S3-compatible server accepts.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  const publicBase = config.ASSET_PUBLIC_BASE_URL?.replace(/\/$/, '');

  const putKnownLength = async (key: string, body: Buffer | Readable, size: number, contentType: string) => {
    await client.send(
      new PutObjectCommand({
        Bucket: bucket,
        Key: key,
        Body: body,
        ContentLength: size,
        ContentType: contentType,
      }),
    );
    return { size };
  };

  return {
    driver: 's3',

    async put(key: string, body: Buffer | Readable, options: PutOptions) {
      assertValidKey(key);
      if (Buffer.isBuffer(body)) return putKnownLength(key, body, body.length, options.contentType);
      if (options.size !== undefined) return putKnownLength(key, body, options.size, options.contentType);
      const dir = await mkdtemp(path.join(tmpdir(), 'svc-s3-spool-'));
      try {
        const spool = path.join(dir, randomUUID());
        await pipeline(body, createWriteStream(spool));
        const { size } = await stat(spool);
        return await putKnownLength(key, createReadStream(spool), size, options.contentType);
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },

    async stat(key: string) {
      assertValidKey(key);
      try {
        const out = await client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
        return describe(out, out.ContentLength ?? 0);
      } catch (err) {
        throw notFound(err, key);
      }
    },

    async get(key: string, options: { range?: ByteRange } = {}) {
      assertValidKey(key);
      const { range } = options;
      try {
        const out = await client.send(
          new GetObjectCommand({
            Bucket: bucket,
            Key: key,
            ...(range ? { Range: `bytes=${range.start}-${range.end}` } : {}),
          }),
        );
        if (!(out.Body instanceof Readable)) throw new Error('S3 returned no readable body');
        // A ranged answer's Content-Length is the range's; the whole size ends its Content-Range.
        const size = range ? Number(out.ContentRange?.split('/')[1]) : (out.ContentLength ?? 0);
        return { ...describe(out, size), body: out.Body };
      } catch (err) {
        throw notFound(err, key);
      }
    },

    async delete(key: string) {
      assertValidKey(key);
      await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
    },

    url: (key: string) => {
      assertValidKey(key);
      return publicBase ? `${publicBase}/${encodeKeyPath(key)}` : signedFileUrl(config, key);
    },
  };
}
