// Generated from GET /api/v1/openapi.json; do not edit.
// Regenerate: UPDATE_CLIENT=1 npx mocha test/clients/typescript.test.ts
/**
 * The OpenAPI document this client was generated from: `info.version`, and the SHA-256 (hex) of
 * its canonical JSON (keys sorted, no spaces) without `servers`, as this repository serves it.
 */
export const API_DOCUMENT = {
  version: '1.0.0',
  sha256: 'bf3b4b01ff6502a0287d47e0411a0cc14356493fd3788b33eeac8ce69cb8c383',
} as const;
