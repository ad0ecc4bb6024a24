-- Scale-to-zero (issue 30): a pod or pod group may stop after idle_stop_seconds without requests through the edge
-- (null: never). Stopped so, its desired state is 'idle_stopped': not a user stop (the next request through the
-- edge starts it again), and not billed (metering counts desired 'running' only).
ALTER TABLE pods DROP CONSTRAINT pods_desired_state_check;
ALTER TABLE pods ADD CONSTRAINT pods_desired_state_check
  CHECK (desired_state IN ('running', 'stopped', 'removed', 'idle_stopped'));
ALTER TABLE pod_groups DROP CONSTRAINT pod_groups_desired_state_check;
ALTER TABLE pod_groups ADD CONSTRAINT pod_groups_desired_state_check
  CHECK (desired_state IN ('running', 'stopped', 'removed', 'idle_stopped'));

-- idle_stop_seconds: null never; awake_since: when it last began to run (created, started, woken, the setting
-- changed): the idle clock counts from the later of this and the last request; woken_at: the last wake, so every
-- edge process holds requests while that start is under way
ALTER TABLE pods ADD COLUMN idle_stop_seconds integer CHECK (idle_stop_seconds > 0),
  ADD COLUMN awake_since timestamptz NOT NULL DEFAULT now(),
  ADD COLUMN woken_at timestamptz;
ALTER TABLE pod_groups ADD COLUMN idle_stop_seconds integer CHECK (idle_stop_seconds > 0),
  ADD COLUMN awake_since timestamptz NOT NULL DEFAULT now(),
  ADD COLUMN woken_at timestamptz;
CREATE INDEX pods_idle_stop ON pods (awake_since) WHERE idle_stop_seconds IS NOT NULL AND desired_state = 'running';
CREATE INDEX pod_groups_idle_stop ON pod_groups (awake_since)
  WHERE idle_stop_seconds IS NOT NULL AND desired_state = 'running';

-- a group's own desired state moves its route too (idle-stopped: the edge wakes it)
CREATE FUNCTION notify_pod_group_route() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('pod_routes', NEW.slug);
  RETURN NULL;
END $$;
CREATE TRIGGER pod_groups_route_changed AFTER UPDATE OF desired_state ON pod_groups
  FOR EACH ROW WHEN (OLD.desired_state IS DISTINCT FROM NEW.desired_state)
  EXECUTE FUNCTION notify_pod_group_route();

-- the edge's per-app time of the last request, kept with the day's counts (flushed in the same batch)
ALTER TABLE site_stats ADD COLUMN last_request_at timestamptz;
