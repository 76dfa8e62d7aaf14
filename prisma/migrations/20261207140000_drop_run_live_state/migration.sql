-- Polls read the tables alone; no gateway claims a workflow query here any more, and no release
-- ever did (the service's first release is its 1.0 workflows), so nothing is kept for a rolling
-- deploy beside an older gateway.
DROP TABLE "RunLiveState";
