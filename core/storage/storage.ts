import type { Readable } from 'node:stream';

export interface PutOptions {
  contentType: string;
  /** Known byte length, when the body is a stream (S3 wants it; local disk ignores it). */
  size?: number;
}

/**
 * Object storage: local disk (the embedded default) or S3. Keys are opaque strings chosen by the
 * caller, e.g. `uploads/<userId>/<uuid>/<filename>`; `url` is durable (never expires).
 */
/** An object as `get` answers it: a stream of its bytes, to be consumed or destroyed. */
export interface StoredObject {
  body: Readable;
  contentType: string;
  size: number;
}

export interface ObjectStorage {
  readonly driver: 'local' | 's3';
  put(key: string, body: Buffer | Readable, options: PutOptions): Promise<{ size: number }>;
  get(key: string): Promise<StoredObject>;
  delete(key: string): Promise<void>;
  /** A durable URL a client (or a provider) can fetch the object from. */
  url(key: string): string;
}
