-- Static sites (issue 11): a site is served at <slug>.<APPS_DOMAIN> by the edge from the files of its live
-- deployment. File contents are content-addressed blobs in this store (sha256 → bytes), shared between
-- deployments and sites, so every edge process on any host serves them; a deployment is a manifest of paths.

CREATE TABLE static_sites (
  id uuid PRIMARY KEY,
  owner_kind text NOT NULL CHECK (owner_kind IN ('account', 'org', 'partner_child')),
  owner_id uuid NOT NULL,
  account_id uuid NOT NULL REFERENCES accounts (id),
  name text NOT NULL,
  -- names the public host <slug>.<APPS_DOMAIN>, shared with pods and pod groups (kernel.appSlugTakenElsewhere)
  slug text NOT NULL,
  -- unknown paths without an extension answer index.html
  spa boolean NOT NULL DEFAULT false,
  -- a file of the deployment answered with 404 for unknown paths
  not_found_page text,
  -- what the edge serves; one UPDATE of this column makes a deployment live (finalize, rollback)
  live_deployment_id uuid,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  removed_at timestamptz
);
CREATE UNIQUE INDEX static_sites_slug_live ON static_sites (slug) WHERE removed_at IS NULL;
CREATE INDEX static_sites_owner ON static_sites (owner_kind, owner_id, created_at);

CREATE TABLE static_deployments (
  id uuid PRIMARY KEY,
  site_id uuid NOT NULL REFERENCES static_sites (id),
  account_id uuid NOT NULL REFERENCES accounts (id),
  -- live and superseded are finalized deployments, told apart by the site's live_deployment_id
  status text NOT NULL CHECK (status IN ('awaiting_upload', 'uploaded', 'finalized')),
  file_count integer NOT NULL DEFAULT 0,
  bytes bigint NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL DEFAULT now(),
  uploaded_at timestamptz,
  finalized_at timestamptz
);
CREATE INDEX static_deployments_site ON static_deployments (site_id, created_at DESC);
CREATE INDEX static_deployments_unfinished ON static_deployments (created_at) WHERE status <> 'finalized';

ALTER TABLE static_sites
  ADD CONSTRAINT static_sites_live_deployment FOREIGN KEY (live_deployment_id) REFERENCES static_deployments (id);

-- one row per distinct content; touched_at is bumped by every upload that uses it, so the sweep never deletes
-- a blob an upload in progress has just found (it deletes only unreferenced blobs untouched for an hour)
CREATE TABLE static_blobs (
  hash text PRIMARY KEY CHECK (hash ~ '^[0-9a-f]{64}$'),
  size bigint NOT NULL,
  content bytea NOT NULL,
  touched_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE static_files (
  deployment_id uuid NOT NULL REFERENCES static_deployments (id) ON DELETE CASCADE,
  path text NOT NULL,
  hash text NOT NULL REFERENCES static_blobs (hash),
  size bigint NOT NULL,
  content_type text NOT NULL,
  PRIMARY KEY (deployment_id, path)
);
CREATE INDEX static_files_hash ON static_files (hash);

-- the edge follows sites across processes: a new site, a deployment made live, settings, deletion
CREATE FUNCTION notify_static_route() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('static_routes', COALESCE(NEW.slug, OLD.slug));
  RETURN NULL;
END $$;
CREATE TRIGGER static_sites_route_added AFTER INSERT ON static_sites
  FOR EACH ROW EXECUTE FUNCTION notify_static_route();
CREATE TRIGGER static_sites_route_changed AFTER UPDATE ON static_sites
  FOR EACH ROW WHEN (OLD.live_deployment_id IS DISTINCT FROM NEW.live_deployment_id
                     OR OLD.spa IS DISTINCT FROM NEW.spa
                     OR OLD.not_found_page IS DISTINCT FROM NEW.not_found_page
                     OR OLD.removed_at IS DISTINCT FROM NEW.removed_at
                     OR OLD.slug IS DISTINCT FROM NEW.slug)
  EXECUTE FUNCTION notify_static_route();
