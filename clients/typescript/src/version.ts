// Generated from GET /api/v1/openapi.json; do not edit.
// Regenerate: UPDATE_CLIENT=1 npx mocha test/clients/typescript.test.ts
/**
 * The OpenAPI document this client was generated from: `info.version`, and the SHA-256 (hex) of
 * its canonical JSON (keys sorted, no spaces) without `servers`, as this repository serves it.
 */
export const API_DOCUMENT = {
  version: '1.0.0',
  sha256: '4044926110377af1373e7532d5d06e2e777264a2389a47756a9653950fc13611',
} as const;
