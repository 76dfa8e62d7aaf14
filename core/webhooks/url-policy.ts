import type { Config } from '../config/config';
import type { ErrorDetail } from '../errors/app-error';
import { hostRefusal, NOT_PUBLIC_MESSAGE } from '../net/public-url';

/**
 * Why a webhook URL is refused at registration, as `details` entries (empty when it is fine);
 * `log` hears the reason a host was refused, which the client is not told.
 */
export async function webhookUrlProblems(
  raw: string,
  config: Config,
  log: (reason: string) => void,
): Promise<ErrorDetail[]> {
  const problem = (message: string): ErrorDetail[] => [{ path: 'body.url', message }];
  const url = new URL(raw);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && config.ALLOW_INSECURE_WEBHOOKS)) {
    return problem('must be an https URL');
  }
  // The URL is shown in every list: credentials in it would be a secret outside the secret field.
  if (url.username || url.password) return problem('must not contain a user name or password');
  const refusal = await hostRefusal(url, config);
  if (refusal === undefined) return [];
  log(refusal);
  return problem(NOT_PUBLIC_MESSAGE);
}
