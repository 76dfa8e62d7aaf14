-- Which route admitted the run (rest, mcp or console): operators see it in the run's records and,
-- as the AgentRunVia search attribute, in Temporal; a run the dispatcher starts keeps it.
ALTER TABLE "Run" ADD COLUMN "via" TEXT NOT NULL DEFAULT 'rest';
