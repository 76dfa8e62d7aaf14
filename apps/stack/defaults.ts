import { isLoopbackHost } from '../../core/net/client-address';

/**
 * What `npm start` sets unless the environment says otherwise (whatever is set wins): one person
 * trying the service on their own machine, with nothing to configure. Open sign-up, plain-http
 * webhooks and private URLs are for this machine only (see main.ts on HOST).
 */
export function embeddedDefaults(options: { host: string; filesDir: string }): Record<string, string> {
  return {
    HOST: options.host,
    ALLOW_SIGN_UP: 'true',
    ALLOW_INSECURE_WEBHOOKS: 'true',
    ALLOW_PRIVATE_NETWORK_URLS: 'true',
    MODEL_PROVIDER: 'local',
    IMAGE_PROVIDER: 'local-preview',
    STORAGE_DRIVER: 'local',
    STORAGE_LOCAL_DIR: options.filesDir,
    // A new account can try the tools at once (the quick start's crop is paid for). A deployment
    // gives none unless its operator says so (docs/security.md, "Sign-up grant").
    CREDIT_GRANT_ON_SIGN_UP: '100',
    // Listening on loopback, every client is this machine, one person: a per-address limit guards
    // nothing there, and a newcomer's eleventh account in an hour (a quick start run again) must
    // not be refused. Listening wider, the service's own limit holds.
    ...(isLoopbackHost(options.host) ? { SIGN_UP_RATE_LIMIT_PER_HOUR: '1000' } : {}),
  };
}
