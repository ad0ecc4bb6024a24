-- Containers the reconciler had to clean up for a pod: generations left behind by a cut rollout, half-done
-- removals, containers still there after the pod's deletion (issue 33). Shown as cleaned_containers.
ALTER TABLE pods ADD COLUMN cleaned_containers integer NOT NULL DEFAULT 0;

-- pending: accepted, waiting for something it needs before its container can start (a volume still creating)
ALTER TABLE pods DROP CONSTRAINT pods_state_check;
ALTER TABLE pods ADD CONSTRAINT pods_state_check
  CHECK (state IN ('pending', 'creating', 'running', 'stopped', 'failed', 'removed', 'unknown'));
