import type { Config } from '../config/config';
import type { ObjectStorage } from './storage';

/** Builds the configured storage driver (local disk or S3). */
export function createStorage(_config: Config): ObjectStorage {
  const missing = () => Promise.reject(new Error('object storage is not built yet'));
  return { driver: 'local', put: missing, get: missing, delete: missing, url: (key) => `/files/${key}` };
}
