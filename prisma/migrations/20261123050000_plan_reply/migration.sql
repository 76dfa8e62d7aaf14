-- The model's reply that proposed a plan, kept with its waitpoint: a step retried after the plan
-- was put to the approver goes on with that very plan instead of asking the model again.
ALTER TABLE "Waitpoint" ADD COLUMN "reply" JSONB;
