import type { Readable } from 'node:stream';

export interface PutOptions {
  contentType: string;
  /** Known byte length, when the body is a stream (S3 wants it; local disk ignores it). */
  size?: number;
}

export interface ObjectInfo {
  contentType: string;
  /** The whole object's length, whatever range is read. */
  size: number;
  /** A strong validator (quoted, as in an ETag header): it changes whenever the bytes may have. */
  etag: string;
  lastModified: Date;
}

/** Bytes `start` to `end`, both included, as in a Range header. */
export interface ByteRange {
  start: number;
  end: number;
}

/** An object as `get` answers it: a stream of its bytes, to be consumed or destroyed. */
export interface StoredObject extends ObjectInfo {
  body: Readable;
}

/**
 * Object storage: local disk (the embedded default) or S3. Keys are opaque strings chosen by the
 * caller, e.g. `uploads/<userId>/<uuid>/<filename>`; `url` is durable (never expires).
 */
export interface ObjectStorage {
  readonly driver: 'local' | 's3';
  put(key: string, body: Buffer | Readable, options: PutOptions): Promise<{ size: number }>;
  /** The object's metadata, without its bytes. */
  stat(key: string): Promise<ObjectInfo>;
  /** The object's bytes (only `range` of them, when given) with its metadata. */
  get(key: string, options?: { range?: ByteRange }): Promise<StoredObject>;
  delete(key: string): Promise<void>;
  /** A durable URL a client (or a provider) can fetch the object from. */
  url(key: string): string;
}
