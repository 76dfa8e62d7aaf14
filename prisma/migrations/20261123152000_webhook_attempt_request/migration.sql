-- What each attempt sent, for a receiver whose signature check fails: the exact string that was
-- signed (`<timestamp>.<body>`) and the request headers (the signature, never the secret).
-- Attempts made before this migration have neither.
ALTER TABLE "WebhookAttempt" ADD COLUMN "signedContent" TEXT,
                             ADD COLUMN "requestHeaders" JSONB;
