import type { Pool } from 'pg';
import { appSecrets, type Config } from '../config/config';
import { openSecret, sealSecret, sealedWithCurrentKey } from './secret-box';
import { replaceSealedSecret, selectSealedSecrets } from './store';

/**
 * Seals every webhook secret again under the current APP_SECRET, the step of a rotation after
 * which APP_SECRET_PREVIOUS can be emptied. Safe to run again and beside running processes.
 */
export async function resealWebhookSecrets(
  pool: Pool,
  config: Pick<Config, 'APP_SECRET' | 'APP_SECRET_PREVIOUS'>,
): Promise<{ resealed: number; current: number; unreadable: string[] }> {
  const secrets = appSecrets(config);
  let resealed = 0;
  let current = 0;
  // Sealed under a secret no longer listed: reported (by endpoint id) rather than stopping the rest.
  const unreadable: string[] = [];
  for (const row of await selectSealedSecrets(pool)) {
    if (sealedWithCurrentKey(secrets, row.sealed)) {
      current++;
      continue;
    }
    let plain: string;
    try {
      plain = openSecret(secrets, row.sealed);
    } catch {
      unreadable.push(row.id);
      continue;
    }
    if (await replaceSealedSecret(pool, row, sealSecret(secrets, plain))) resealed++;
  }
  return { resealed, current, unreadable };
}
