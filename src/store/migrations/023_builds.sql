-- Builds (issue 12): server-side image builds from an uploaded source archive (src/builds). The row is the
-- queue: a worker host's runner claims its own `queued` rows up to BUILD_CONCURRENCY, so the limit holds per
-- host whatever process runs the build. A row left `building` by a platform that died is marked failed at the
-- host's next start.

CREATE TABLE builds (
  id uuid PRIMARY KEY,
  owner_kind text NOT NULL CHECK (owner_kind IN ('account', 'org', 'partner_child')),
  owner_id uuid NOT NULL,
  -- the account that created it (its deploy acts for this account)
  account_id uuid NOT NULL REFERENCES accounts (id),
  -- the app (pod or pod group) rolled to the image once it is pushed; null: build and push only
  app_kind text CHECK (app_kind IN ('pod', 'group')),
  app_id uuid,
  app_slug text,
  dockerfile text NOT NULL,
  context_path text NOT NULL,
  -- the host whose runner builds it; the source is kept in that host's DATA_DIR
  host_id uuid NOT NULL REFERENCES hosts (id),
  status text NOT NULL CHECK (status IN ('awaiting_upload', 'queued', 'building', 'succeeded', 'failed', 'cancelled')),
  status_reason text,
  -- what the build is doing now (pulling, building, pushing, deploying), for cancel reports and GET
  phase text,
  -- SHA-256 of the single-use upload token; cleared when the upload is claimed
  upload_token_hash bytea,
  upload_expires_at timestamptz NOT NULL,
  uploaded_at timestamptz,
  source_bytes bigint,
  -- the pushed image: <registry>/<namespace>/<repository>:<tag> and its manifest digest
  image text,
  digest text,
  deployed_at timestamptz,
  deploy_error text,
  cancel_reason text,
  cancel_phase text,
  cancel_detail jsonb,
  -- the last BUILD_LOG_BYTES characters of the builder's output; log_dropped counts what was cut from the front
  logs text NOT NULL DEFAULT '',
  log_dropped bigint NOT NULL DEFAULT 0,
  -- the process running it (its lease, src/hosts) and the builder's process id: a build whose process died is
  -- marked failed by the next runner of its host, which also kills a builder the dead platform left behind
  runner_lease uuid,
  runner_pid integer,
  created_at timestamptz NOT NULL DEFAULT now(),
  queued_at timestamptz,
  started_at timestamptz,
  finished_at timestamptz,
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX builds_owner ON builds (owner_kind, owner_id, created_at DESC);
CREATE INDEX builds_host_active ON builds (host_id, queued_at) WHERE status IN ('queued', 'building');
CREATE INDEX builds_awaiting_upload ON builds (host_id, upload_expires_at) WHERE status = 'awaiting_upload';

-- Client-side steps (POST /v1/builds/{id}/events): the CLI's packing, uploading, deploying phases, for diagnostics.
CREATE TABLE build_events (
  id bigserial PRIMARY KEY,
  build_id uuid NOT NULL REFERENCES builds (id) ON DELETE CASCADE,
  phase text NOT NULL,
  level text NOT NULL CHECK (level IN ('debug', 'info', 'warn', 'error')),
  message text NOT NULL,
  detail jsonb,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX build_events_build ON build_events (build_id, id);
