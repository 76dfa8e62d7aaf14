-- A waitpoint still pending when its run is cancelled, or its chat deleted, becomes CANCELLED;
-- EXPIRED stays the approval timeout's alone.
ALTER TYPE "WaitpointStatus" ADD VALUE 'CANCELLED';

-- When the reconciler last asked Temporal about a run whose row had stopped moving.
ALTER TABLE "Run" ADD COLUMN "checkedAt" TIMESTAMPTZ(3);

-- The reconciler's look for deliveries whose workflow never started.
CREATE INDEX "WebhookDelivery_pending_updatedAt_idx" ON "WebhookDelivery"("updatedAt") WHERE "status" = 'PENDING';
