-- A rotated webhook signing secret keeps signing (in a second header) until its overlap ends.
ALTER TABLE "WebhookEndpoint" ADD COLUMN "previousSecretEncrypted" TEXT;
ALTER TABLE "WebhookEndpoint" ADD COLUMN "previousSecretExpiresAt" TIMESTAMPTZ(3);
