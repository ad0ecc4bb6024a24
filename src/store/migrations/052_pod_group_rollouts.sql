-- Issue 29: a pod group's spec change rolls its members one batch at a time (src/apps/rollout/groups.ts):
-- the rollout's state, why it went back, and the spec it goes back to if a member's new release fails.
ALTER TABLE pod_groups ADD COLUMN rollout jsonb;
