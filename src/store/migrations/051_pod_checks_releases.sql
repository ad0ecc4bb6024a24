-- Issue 29: declared checks, safe rollouts with automatic rollback, and numbered releases of pods.

-- checks: declared startup/readiness/liveness (null: the default TCP readiness); check_status: per check its
-- state and last failure, as the reconciler and the check monitor saw them; ready: the readiness verdict on
-- the serving replica (the edge routes only to ready replicas)
ALTER TABLE pods ADD COLUMN checks jsonb;
ALTER TABLE pods ADD COLUMN check_status jsonb NOT NULL DEFAULT '{}';
ALTER TABLE pods ADD COLUMN ready boolean NOT NULL DEFAULT true;
ALTER TABLE pods ADD COLUMN stop_grace_seconds integer NOT NULL DEFAULT 10;
ALTER TABLE pods ADD COLUMN rollout_deadline_seconds integer NOT NULL DEFAULT 300;
-- the release the wanted generation runs, and the last automatic rollback (shown on the pod)
ALTER TABLE pods ADD COLUMN release integer NOT NULL DEFAULT 1;
ALTER TABLE pods ADD COLUMN rollback jsonb;

ALTER TABLE pod_rollouts ADD COLUMN release integer;

-- every change of image, command, env, size, port or checks: a numbered release of the pod
CREATE TABLE pod_releases (
  id uuid PRIMARY KEY,
  pod_id uuid NOT NULL REFERENCES pods (id),
  number integer NOT NULL,
  image text NOT NULL,
  port integer,
  command jsonb,
  env_sealed text NOT NULL,
  size text NOT NULL,
  gpu text,
  checks jsonb,
  stop_grace_seconds integer NOT NULL,
  rollout_deadline_seconds integer NOT NULL,
  changed text[] NOT NULL,
  description text NOT NULL,
  created_by uuid,
  outcome text NOT NULL DEFAULT 'pending'
    CHECK (outcome IN ('pending', 'serving', 'superseded', 'rolled_back', 'failed')),
  outcome_reason text,
  created_at timestamptz NOT NULL DEFAULT now(),
  ended_at timestamptz,
  UNIQUE (pod_id, number)
);

-- the edge follows readiness too
DROP TRIGGER pods_route_changed ON pods;
CREATE TRIGGER pods_route_changed AFTER UPDATE OF address, state, desired_state, ready ON pods
  FOR EACH ROW WHEN (OLD.address IS DISTINCT FROM NEW.address OR OLD.state IS DISTINCT FROM NEW.state
                     OR OLD.desired_state IS DISTINCT FROM NEW.desired_state OR OLD.ready IS DISTINCT FROM NEW.ready)
  EXECUTE FUNCTION notify_pod_route();
