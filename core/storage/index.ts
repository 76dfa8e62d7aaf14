import type { Config } from '../config/config';
import { createLocalStorage } from './local';
import { createS3Storage } from './s3';
import type { ObjectStorage } from './storage';

/** Builds the configured storage driver (local disk or S3). */
export function createStorage(config: Config): ObjectStorage {
  return config.STORAGE_DRIVER === 's3' ? createS3Storage(config) : createLocalStorage(config);
}
