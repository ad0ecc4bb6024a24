-- Organization external hosts (issue 14, src/orgs/hosts): machines an organization brings, running the host
-- agent (src/agent). The agent never gets the store's credentials: it registers once with a one-time bootstrap
-- token and then calls the control plane over HTTPS with a credential of its own. Both are stored as SHA-256.

CREATE TABLE org_hosts (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
  name text NOT NULL,
  region text,
  created_by uuid NOT NULL REFERENCES accounts (id),
  -- pending until the agent registers: the bootstrap token (one use, expiring) is then cleared
  bootstrap_hash bytea,
  bootstrap_expires_at timestamptz,
  credential_hash bytea,
  registered_at timestamptz,
  -- what the agent reported at registration (and refreshes with its reports)
  machine_name text,
  agent_version text,
  gpu_slots integer NOT NULL DEFAULT 0 CHECK (gpu_slots >= 0),
  capacity jsonb NOT NULL DEFAULT '{}',
  labels jsonb NOT NULL DEFAULT '{}',
  -- online while a beat arrived within heartbeat_seconds × HOST_MISSED_BEATS (the hosts area's settings)
  heartbeat_seconds integer NOT NULL CHECK (heartbeat_seconds > 0),
  last_heartbeat_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX org_hosts_org ON org_hosts (org_id, created_at);
CREATE UNIQUE INDEX org_hosts_bootstrap ON org_hosts (bootstrap_hash) WHERE bootstrap_hash IS NOT NULL;
CREATE UNIQUE INDEX org_hosts_credential ON org_hosts (credential_hash) WHERE credential_hash IS NOT NULL;

-- A pod whose external host is offline: what its containers do is not known until the agent reports again.
ALTER TABLE pods DROP CONSTRAINT pods_state_check;
ALTER TABLE pods ADD CONSTRAINT pods_state_check
  CHECK (state IN ('creating', 'running', 'stopped', 'failed', 'removed', 'unknown'));

-- An agent waiting in GET /v1/agent/desired wakes when a pod placed on its host changes what it must run.
CREATE FUNCTION notify_org_host_desired() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.host_id ~ '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'
     AND EXISTS (SELECT 1 FROM org_hosts WHERE id = NEW.host_id::uuid) THEN
    PERFORM pg_notify('org_host_desired', NEW.host_id);
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER pods_org_host_desired AFTER INSERT OR UPDATE OF generation, desired_state, host_id ON pods
  FOR EACH ROW EXECUTE FUNCTION notify_org_host_desired();
