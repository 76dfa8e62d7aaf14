// Generated from GET /api/v1/openapi.json; do not edit.
// Regenerate: UPDATE_CLIENT=1 npx mocha test/clients/typescript.test.ts
/**
 * The OpenAPI document this client was generated from: `info.version`, and the SHA-256 (hex) of
 * its canonical JSON (keys sorted, no spaces) without `servers`, as this repository serves it.
 */
export const API_DOCUMENT = {
  version: '1.0.0',
  sha256: '1614479b64ed272926f2e8c55e2eb6dfcafd49ad8e9714b72e69348c7bc575ce',
} as const;
