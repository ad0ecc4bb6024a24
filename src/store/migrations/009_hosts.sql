-- Hosts (issue 18): every process that runs providers registers its host and keeps a heartbeat;
-- every resource that lives on a host records the host that holds it; each process holds a lease,
-- so what it left in progress (idempotency keys) is released as soon as it is known to be dead.

CREATE TABLE hosts (
  -- kept in DATA_DIR/host-id: a restarted process on the same machine is the same host
  id uuid PRIMARY KEY,
  name text NOT NULL,
  roles text[] NOT NULL,
  capacity jsonb NOT NULL DEFAULT '{}',
  -- the host's own beat interval: it counts unavailable after HOST_MISSED_BEATS of them without one
  heartbeat_seconds integer NOT NULL CHECK (heartbeat_seconds > 0),
  registered_at timestamptz NOT NULL DEFAULT now(),
  started_at timestamptz NOT NULL DEFAULT now(),
  last_heartbeat_at timestamptz NOT NULL DEFAULT now()
);

-- one row per process start; alive while it holds the advisory lock on hashtext('process:' || id)
CREATE TABLE host_processes (
  id uuid PRIMARY KEY,
  host_id uuid NOT NULL REFERENCES hosts (id),
  pid integer NOT NULL,
  roles text[] NOT NULL,
  started_at timestamptz NOT NULL DEFAULT now(),
  last_heartbeat_at timestamptz NOT NULL DEFAULT now(),
  stopped_at timestamptz
);
CREATE INDEX host_processes_host ON host_processes (host_id, started_at DESC);

-- Placement. NULL host_id: an instance created before hosts existed (single-process setups); the
-- worker host whose DATA_DIR holds its files adopts it at start-up. Until then its commands wait,
-- marked host_unavailable. The standby lives beside the primary with the local provider.
ALTER TABLE databases ADD COLUMN host_id uuid REFERENCES hosts (id), ADD COLUMN standby_host_id uuid REFERENCES hosts (id);
CREATE INDEX databases_host ON databases (host_id) WHERE purged_at IS NULL;

-- the process that holds a running key: a retry takes the key over at once when that process is dead
ALTER TABLE idempotency_keys ADD COLUMN process_id uuid;
