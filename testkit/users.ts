import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import {
  API_KEY_SHOWN_PREFIX_LENGTH,
  SESSION_COOKIE,
  hashToken,
  newApiKey,
  newSessionToken,
} from '../core/auth/tokens';
import { testStack } from './stack';

export interface TestUser {
  userId: string;
  email: string;
  /** A live API key: `Authorization: Bearer ${apiKey}`. */
  apiKey: string;
  apiKeyId: string;
  /** `cookie` header value of a live session. */
  cookie: string;
  sessionId: string;
  /** Headers for public routes. */
  bearer: { authorization: string };
}

const TEST_USER_CREDITS = 1_000_000;

/**
 * A user with a live API key and session, written straight to the database: the test stack's, or
 * `on.pool`'s (a user already there, when `on.userId` names one, gets the key and session only).
 */
export async function createTestUser(on: { pool?: Pool; userId?: string } = {}): Promise<TestUser> {
  const pool = on.pool ?? (await testStack()).db.pool;
  const userId = on.userId ?? randomUUID();
  const email = `user-${userId}@example.test`;
  // Not a real hash: tests that sign in create their users through the sign-up route. The balance
  // is ample, so only a test about credits meets the 402 (it sets its own balance).
  if (!on.userId)
    await pool.query(
      `INSERT INTO "User" (id, email, "passwordHash", "creditBalance", "updatedAt")
       VALUES ($1, $2, 'test-user-no-password', $3, now())`,
      [userId, email, TEST_USER_CREDITS],
    );
  const apiKey = newApiKey();
  const apiKeyId = randomUUID();
  await pool.query(
    `INSERT INTO "ApiKey" (id, "userId", name, prefix, "keyHash") VALUES ($1, $2, 'test', $3, $4)`,
    [apiKeyId, userId, apiKey.slice(0, API_KEY_SHOWN_PREFIX_LENGTH), hashToken(apiKey)],
  );
  const token = newSessionToken();
  const sessionId = randomUUID();
  await pool.query(
    `INSERT INTO "Session" (id, "userId", "tokenHash", "expiresAt") VALUES ($1, $2, $3, now() + interval '1 day')`,
    [sessionId, userId, hashToken(token)],
  );
  return {
    userId,
    email,
    apiKey,
    apiKeyId,
    cookie: `${SESSION_COOKIE}=${token}`,
    sessionId,
    bearer: { authorization: `Bearer ${apiKey}` },
  };
}
