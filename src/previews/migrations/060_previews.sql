-- Preview environments per GitLab merge request (issue 30, src/previews/README.md).
CREATE TABLE preview_links (
  id uuid PRIMARY KEY,
  owner_kind text NOT NULL,
  owner_id text NOT NULL,
  -- who linked it: previews are created as this account acting for the owner (admission, deploy rules, budgets)
  account_id text NOT NULL,
  base_url text NOT NULL,
  project text NOT NULL,
  token_sealed text NOT NULL,
  -- sha256 of the webhook secret (shown once); compared in constant time
  secret_hash bytea NOT NULL,
  app_name text NOT NULL,
  dockerfile text NOT NULL DEFAULT 'Dockerfile',
  port integer,
  size text NOT NULL,
  -- the preview pod's environment, sealed (it may hold secrets)
  env_sealed text NOT NULL,
  database_id text,
  idle_stop_seconds integer,
  max_age_seconds integer NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  -- an unlinked project keeps its row until the sweep has removed every preview of it
  deleted_at timestamptz
);
CREATE UNIQUE INDEX preview_links_app ON preview_links (owner_kind, owner_id, app_name) WHERE deleted_at IS NULL;

CREATE TABLE previews (
  id uuid PRIMARY KEY,
  link_id uuid NOT NULL REFERENCES preview_links (id) ON DELETE CASCADE,
  mr_iid integer NOT NULL,
  -- open: the merge request wants a preview; closed: everything of it is to be removed
  desired text NOT NULL CHECK (desired IN ('open', 'closed')),
  state text NOT NULL CHECK (state IN ('building', 'deploying', 'running', 'failed', 'removing', 'removed')),
  source_branch text NOT NULL,
  -- the commit wanted (latest heard from GitLab), the one being built, the one serving
  sha text NOT NULL,
  build_sha text,
  build_id text,
  deployed_sha text,
  pod_id text,
  db_branch_id text,
  slug text NOT NULL,
  note_posted_sha text,
  error text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  closed_at timestamptz,
  UNIQUE (link_id, mr_iid)
);
CREATE INDEX previews_unsettled ON previews (updated_at) WHERE state NOT IN ('running', 'removed', 'failed');
