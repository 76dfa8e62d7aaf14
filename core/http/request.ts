import express, { type Request } from 'express';

// What every HTTP transport (the REST routes, the MCP route) reads a request with.

/** JSON bodies: 1 MB at most (DECISIONS.md). */
export const jsonBody = express.json({ limit: '1mb' });

const BEARER = /^Bearer ([^\s]+)$/;

/** The token of `Authorization: Bearer …`, if the header has that form. */
export const bearerToken = (req: Request): string | undefined =>
  BEARER.exec(req.headers.authorization ?? '')?.[1];
