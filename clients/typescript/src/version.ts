// Generated from GET /api/v1/openapi.json; do not edit.
// Regenerate: UPDATE_CLIENT=1 npx mocha test/clients/typescript.test.ts
/**
 * The OpenAPI document this client was generated from: `info.version`, and the SHA-256 (hex) of
 * its canonical JSON (keys sorted, no spaces) without `servers`, as this repository serves it.
 */
export const API_DOCUMENT = {
  version: '1.0.0',
  sha256: 'a5aaa69b3fef31f401f5518d708275b065bc714cf2faa3598457fab81bb324e7',
} as const;
