-- Managed PostgreSQL instances: desired state, observed state, commands and backups.

CREATE TABLE databases (
  id uuid PRIMARY KEY,
  account_id uuid NOT NULL REFERENCES accounts (id),
  name text NOT NULL,
  slug text NOT NULL,
  label text,
  engine text NOT NULL DEFAULT 'postgres' CHECK (engine = 'postgres'),
  version integer NOT NULL CHECK (version IN (16, 17)),
  size text NOT NULL CHECK (size IN ('dev', 'basic', 'pro', 'business')),
  storage_gb integer NOT NULL CHECK (storage_gb > 0),
  pitr_retention_days integer NOT NULL CHECK (pitr_retention_days BETWEEN 1 AND 35),
  -- what the user asked for; workers reconcile the server to it
  desired_state text NOT NULL CHECK (desired_state IN ('running', 'paused', 'removed')),
  -- what the platform last observed
  state text NOT NULL CHECK (state IN ('creating', 'running', 'paused', 'removed', 'failed')),
  status_reason text,
  db_name text NOT NULL,
  db_user text NOT NULL,
  host text,
  port integer,
  allowlist jsonb NOT NULL DEFAULT '[]',
  authorized_clients jsonb NOT NULL DEFAULT '[]',
  compute_autoscale jsonb NOT NULL DEFAULT '{}',
  storage_autoscale jsonb NOT NULL DEFAULT '{}',
  ha_enabled boolean NOT NULL DEFAULT false,
  pool_enabled boolean NOT NULL DEFAULT false,
  extensions text[] NOT NULL DEFAULT '{}',
  -- kept only until shown once through initial-credentials (and needed by provisioning until then)
  initial_password text,
  initial_superuser_password text,
  initial_credentials_revealed_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  removed_at timestamptz,
  purged_at timestamptz
);
-- slugs name public hosts (<slug>.db.<domain>), so they are unique platform-wide; a removed instance keeps its slug until purged
CREATE UNIQUE INDEX databases_slug_live ON databases (slug) WHERE purged_at IS NULL;
CREATE INDEX databases_account ON databases (account_id, created_at);

CREATE TABLE database_commands (
  id uuid PRIMARY KEY,
  database_id uuid NOT NULL REFERENCES databases (id),
  kind text NOT NULL,
  status text NOT NULL CHECK (status IN ('queued', 'running', 'succeeded', 'failed')),
  params jsonb NOT NULL DEFAULT '{}',
  result jsonb,
  error text,
  attempts integer NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL DEFAULT now(),
  started_at timestamptz,
  finished_at timestamptz
);
CREATE INDEX database_commands_db ON database_commands (database_id, created_at DESC);
CREATE INDEX database_commands_open ON database_commands (status) WHERE status IN ('queued', 'running');

CREATE TABLE database_backups (
  id text NOT NULL,
  database_id uuid NOT NULL REFERENCES databases (id),
  account_id uuid NOT NULL REFERENCES accounts (id),
  kind text NOT NULL CHECK (kind IN ('base', 'wal', 'snapshot')),
  label text,
  status text NOT NULL,
  size_bytes bigint NOT NULL DEFAULT 0,
  started_at timestamptz,
  finished_at timestamptz,
  start_lsn text,
  stop_lsn text,
  verified_at timestamptz,
  verify_ok boolean,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (database_id, id)
);
CREATE INDEX database_backups_account ON database_backups (account_id, finished_at DESC);
