-- Apps: pods (one container per replica), pod groups (autoscaled members), volumes, pod templates and
-- rollouts. The rows are desired state; the reconciler on each pod's host drives containers to it.

CREATE TABLE pod_groups (
  id uuid PRIMARY KEY,
  owner_kind text NOT NULL CHECK (owner_kind IN ('account', 'org', 'partner_child')),
  owner_id uuid NOT NULL,
  account_id uuid NOT NULL REFERENCES accounts (id),
  name text NOT NULL,
  slug text NOT NULL,
  -- the member pods' spec (image, port, command, env sealed, size, databases); volumes are per pod, so none here
  spec jsonb NOT NULL,
  replica_min integer NOT NULL CHECK (replica_min >= 1),
  replica_max integer NOT NULL CHECK (replica_max >= replica_min),
  target_cpu_percent integer NOT NULL CHECK (target_cpu_percent BETWEEN 10 AND 100),
  desired_replicas integer NOT NULL,
  desired_state text NOT NULL CHECK (desired_state IN ('running', 'stopped', 'removed')),
  -- why autoscaling holds (spend cap reached), shown in GET
  scale_hold text,
  last_scaled_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  removed_at timestamptz
);
CREATE INDEX pod_groups_owner ON pod_groups (owner_kind, owner_id, created_at);

CREATE TABLE pods (
  id uuid PRIMARY KEY,
  owner_kind text NOT NULL CHECK (owner_kind IN ('account', 'org', 'partner_child')),
  owner_id uuid NOT NULL,
  account_id uuid NOT NULL REFERENCES accounts (id),
  name text NOT NULL,
  -- names the public host <slug>.<APPS_DOMAIN>, so unique among live pods and groups platform-wide
  slug text NOT NULL,
  group_id uuid REFERENCES pod_groups (id),
  template_id uuid,
  -- linked apps: created by an operator route on behalf of an e-mail user (read-only to that user)
  linked_email text,
  linked_service text,
  image text NOT NULL,
  port integer CHECK (port BETWEEN 1 AND 65535),
  command jsonb,
  -- environment sealed with the platform key (may hold secrets); {} sealed when empty
  env_sealed text NOT NULL,
  size text NOT NULL,
  gpu text,
  volumes jsonb NOT NULL DEFAULT '[]',
  databases jsonb NOT NULL DEFAULT '[]',
  -- bumped by every change the containers must follow (spec, restart, rotated credentials)
  generation integer NOT NULL DEFAULT 1,
  desired_state text NOT NULL CHECK (desired_state IN ('running', 'stopped', 'removed')),
  state text NOT NULL CHECK (state IN ('creating', 'running', 'stopped', 'failed', 'removed')),
  state_reason text,
  -- set while billing holds the pod stopped (overdue); resume only undoes its own pause
  paused_reason text,
  host_id text,
  -- observed: where the serving replica listens (127.0.0.1:<port>) and which generation serves
  address text,
  network_address text,
  serving_generation integer,
  restart_count integer NOT NULL DEFAULT 0,
  crash_count integer NOT NULL DEFAULT 0,
  next_restart_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  removed_at timestamptz
);
CREATE UNIQUE INDEX pods_slug_live ON pods (slug) WHERE desired_state <> 'removed';
CREATE UNIQUE INDEX pod_groups_slug_live ON pod_groups (slug) WHERE desired_state <> 'removed';
CREATE INDEX pods_owner ON pods (owner_kind, owner_id, created_at);
CREATE INDEX pods_host_live ON pods (host_id) WHERE state <> 'removed';
CREATE INDEX pods_group ON pods (group_id) WHERE group_id IS NOT NULL;
CREATE INDEX pods_linked ON pods (lower(linked_email)) WHERE linked_email IS NOT NULL;
CREATE INDEX pods_databases ON pods USING gin (databases);

-- every generation a pod ran: the legacy /v1/deployments/{id} answers for these
CREATE TABLE pod_rollouts (
  id uuid PRIMARY KEY,
  pod_id uuid NOT NULL REFERENCES pods (id),
  generation integer NOT NULL,
  image text NOT NULL,
  reason text NOT NULL,
  state text NOT NULL CHECK (state IN ('pending', 'serving', 'replaced', 'failed')),
  restarts integer NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL DEFAULT now(),
  serving_at timestamptz,
  ended_at timestamptz,
  UNIQUE (pod_id, generation)
);

CREATE TABLE volumes (
  id uuid PRIMARY KEY,
  owner_kind text NOT NULL CHECK (owner_kind IN ('account', 'org', 'partner_child')),
  owner_id uuid NOT NULL,
  account_id uuid NOT NULL REFERENCES accounts (id),
  name text NOT NULL,
  size_gb integer NOT NULL CHECK (size_gb BETWEEN 1 AND 16384),
  host_id text,
  state text NOT NULL CHECK (state IN ('creating', 'ready', 'removed', 'failed')),
  state_reason text,
  created_at timestamptz NOT NULL DEFAULT now(),
  removed_at timestamptz
);
CREATE UNIQUE INDEX volumes_name_live ON volumes (owner_kind, owner_id, name) WHERE state <> 'removed';

CREATE TABLE pod_templates (
  id uuid PRIMARY KEY,
  owner_kind text NOT NULL CHECK (owner_kind IN ('account', 'org', 'partner_child')),
  owner_id uuid NOT NULL,
  account_id uuid NOT NULL REFERENCES accounts (id),
  name text NOT NULL,
  -- a saved pod spec; env sealed inside it
  spec jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  removed_at timestamptz
);
CREATE UNIQUE INDEX pod_templates_name_live ON pod_templates (owner_kind, owner_id, name) WHERE removed_at IS NULL;

-- one isolated network per owner and host: tenants' containers never share one
CREATE TABLE owner_networks (
  owner_kind text NOT NULL,
  owner_id uuid NOT NULL,
  host_id text NOT NULL,
  name text NOT NULL,
  subnet text NOT NULL,
  gateway text NOT NULL,
  PRIMARY KEY (owner_kind, owner_id, host_id)
);

-- the edge follows serving addresses across processes
CREATE FUNCTION notify_pod_route() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('pod_routes', NEW.slug);
  RETURN NULL;
END $$;
CREATE TRIGGER pods_route_changed AFTER UPDATE OF address, state, desired_state ON pods
  FOR EACH ROW WHEN (OLD.address IS DISTINCT FROM NEW.address OR OLD.state IS DISTINCT FROM NEW.state
                     OR OLD.desired_state IS DISTINCT FROM NEW.desired_state)
  EXECUTE FUNCTION notify_pod_route();
CREATE INDEX pods_volumes ON pods USING gin (volumes);
