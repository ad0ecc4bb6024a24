-- Scale-to-zero for dev databases (issue 30): a dev database without a standby may stop after idle_stop_seconds
-- without client connections (null: never). Stopped so, both its desired and its observed state are
-- 'idle_stopped': not a user stop (the next connection to its address starts it again), and not metered for compute
-- (billing meters it as paused: storage only).
ALTER TABLE databases DROP CONSTRAINT databases_desired_state_check;
ALTER TABLE databases ADD CONSTRAINT databases_desired_state_check
  CHECK (desired_state IN ('running', 'paused', 'removed', 'idle_stopped'));
ALTER TABLE databases DROP CONSTRAINT databases_state_check;
ALTER TABLE databases ADD CONSTRAINT databases_state_check
  CHECK (state IN ('creating', 'running', 'paused', 'removed', 'failed', 'idle_stopped'));

-- awake_since: when it last began to run (created, started, woken, the setting changed); last_active_at: the last
-- time the idle sweep saw a client connection. The idle clock counts from the later of the two. wakes: how many
-- times a connection started it.
ALTER TABLE databases ADD COLUMN idle_stop_seconds integer CHECK (idle_stop_seconds > 0),
  ADD COLUMN awake_since timestamptz NOT NULL DEFAULT now(),
  ADD COLUMN last_active_at timestamptz,
  ADD COLUMN wakes integer NOT NULL DEFAULT 0;
CREATE INDEX databases_idle_stop ON databases (host_id)
  WHERE idle_stop_seconds IS NOT NULL AND desired_state IN ('running', 'idle_stopped');

-- an idle-stopped instance keeps its data, so billing meters its storage
DROP INDEX databases_billable;
CREATE INDEX databases_billable ON databases (owner_kind, owner_id, id) WHERE state IN ('running', 'paused', 'idle_stopped');
