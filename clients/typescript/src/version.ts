// Generated from GET /api/v1/openapi.json; do not edit.
// Regenerate: UPDATE_CLIENT=1 npx mocha test/clients/typescript.test.ts
/**
 * The OpenAPI document this client was generated from: `info.version`, and the SHA-256 (hex) of
 * its canonical JSON (keys sorted, no spaces) without `servers`, as this repository serves it.
 */
export const API_DOCUMENT = {
  version: '1.0.0',
  sha256: 'e8769b36fca5ca96e192ca9b504a390aaeecf7fdb446b3a5dbc2119b4255b040',
} as const;
