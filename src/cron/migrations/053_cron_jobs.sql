-- Cron jobs (issue 29): a schedule that runs a container to completion; every run is a row.
CREATE TABLE cron_jobs (
  id uuid PRIMARY KEY,
  owner_kind text NOT NULL CHECK (owner_kind IN ('account', 'org', 'partner_child')),
  owner_id uuid NOT NULL,
  account_id uuid NOT NULL REFERENCES accounts (id),
  name text NOT NULL,
  image text NOT NULL,
  -- the pod whose image the job took (null: an image given directly)
  source_pod_id uuid,
  command jsonb NOT NULL,
  env_sealed text NOT NULL,
  schedule text NOT NULL,
  time_zone text NOT NULL,
  concurrency_policy text NOT NULL CHECK (concurrency_policy IN ('forbid', 'replace', 'allow')),
  deadline_seconds integer NOT NULL CHECK (deadline_seconds >= 1),
  size text NOT NULL,
  suspended boolean NOT NULL DEFAULT false,
  -- where missed and failed runs are told: the creating account's e-mail when the job was made
  notify_email text NOT NULL,
  -- the next scheduled instant not fired yet; the scheduler advances it in the transaction that records the run
  next_run_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  removed_at timestamptz
);
CREATE UNIQUE INDEX cron_jobs_name_live ON cron_jobs (owner_kind, owner_id, name) WHERE removed_at IS NULL;
CREATE INDEX cron_jobs_due ON cron_jobs (next_run_at) WHERE removed_at IS NULL AND NOT suspended;

CREATE TABLE cron_runs (
  id uuid PRIMARY KEY,
  job_id uuid NOT NULL REFERENCES cron_jobs (id) ON DELETE CASCADE,
  owner_kind text NOT NULL,
  owner_id uuid NOT NULL,
  account_id uuid NOT NULL,
  scheduled_at timestamptz NOT NULL,
  trigger text NOT NULL CHECK (trigger IN ('schedule', 'manual')),
  state text NOT NULL CHECK (state IN ('running', 'succeeded', 'failed', 'skipped', 'missed', 'refused', 'cancelled')),
  reason text,
  size text NOT NULL,
  exit_code integer,
  host_id text,
  container text,
  started_at timestamptz,
  finished_at timestamptz,
  logs text NOT NULL DEFAULT '',
  created_at timestamptz NOT NULL DEFAULT now()
);
-- one process fires each scheduled instant, however many API processes tick at once
CREATE UNIQUE INDEX cron_runs_once ON cron_runs (job_id, scheduled_at) WHERE trigger = 'schedule';
CREATE INDEX cron_runs_job ON cron_runs (job_id, created_at DESC);
CREATE INDEX cron_runs_running ON cron_runs (owner_kind, owner_id, id) WHERE state = 'running';
