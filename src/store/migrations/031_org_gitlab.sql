-- GitLab integration and syncs (src/orgs/gitlab, README "GitLab integration and syncs"): one integration per
-- organization, the history of sync jobs (kept when the integration is removed), and per app what the periodic
-- scan last queued syncs for and which commit of its GitOps manifest the platform last wrote or applied.

CREATE TABLE org_gitlab (
  org_id uuid PRIMARY KEY REFERENCES orgs (id) ON DELETE CASCADE,
  base_url text NOT NULL,
  group_path text NOT NULL,
  -- the access token, sealed with the platform key (SecretBox, column name as associated data)
  token_sealed text NOT NULL,
  archive_enabled boolean NOT NULL DEFAULT false,
  gitops_enabled boolean NOT NULL DEFAULT false,
  gitops_repo text,
  gitops_namespace text,
  gitops_host_pattern text,
  gitops_auto_sync boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE org_git_syncs (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
  app_kind text NOT NULL CHECK (app_kind IN ('pod', 'pod-group', 'site')),
  app_id uuid NOT NULL,
  app_slug text NOT NULL,
  kind text NOT NULL CHECK (kind IN ('archive', 'gitops', 'auto_sync')),
  status text NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'running', 'succeeded', 'failed', 'skipped')),
  -- what the scan saw when it queued the sync: a site's live deployment id, a pod's spec digest, a manifest commit
  revision text,
  -- the GitLab project written or read (full path) and the commit made or applied
  project_path text,
  commit_id text,
  detail text,
  error text,
  attempts integer NOT NULL DEFAULT 0,
  -- the job-queue job working it: only that job (and its retries) runs it, so a job sent twice does no harm
  job_id text,
  created_at timestamptz NOT NULL DEFAULT now(),
  -- when it was (re-)queued: the scan sends jobs again for rows queued long ago and never started
  queued_at timestamptz NOT NULL DEFAULT now(),
  started_at timestamptz,
  finished_at timestamptz
);
CREATE INDEX org_git_syncs_org ON org_git_syncs (org_id, created_at DESC, id DESC);
CREATE INDEX org_git_syncs_queued ON org_git_syncs (queued_at) WHERE status = 'queued' AND started_at IS NULL;

CREATE TABLE org_git_sync_state (
  org_id uuid NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
  app_kind text NOT NULL,
  app_id uuid NOT NULL,
  -- the revision the scan last queued syncs for
  revision text NOT NULL,
  -- the commit of the app's manifest file the platform last wrote or applied (auto-sync applies newer ones)
  gitops_commit text,
  -- the newest commit of that file the auto-sync poll queued an auto_sync for (so it queues each commit once)
  polled_commit text,
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (org_id, app_kind, app_id)
);
