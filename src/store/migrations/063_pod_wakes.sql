-- Scale-to-zero (issue 30): how many times a pod was woken by a request (a wake keeps the generation and restarts
-- the kept container, so pod_rollouts does not count it).
ALTER TABLE pods ADD COLUMN wakes integer NOT NULL DEFAULT 0;
