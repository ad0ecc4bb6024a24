-- Base-image refresh (issue 14; src/orgs/README.md, "Base-image refresh"). The builds area tells its observers of
-- every ended build; the organizations area records the succeeded builds of company apps with the digest each base
-- image had when the build pulled it, and proposes a rebuild when a base image's registry names another digest.

-- One succeeded build of a company app (a pod or pod group owned by the organization): the app's newest row is the
-- build its image came from.
CREATE TABLE org_app_builds (
  build_id uuid PRIMARY KEY REFERENCES builds (id) ON DELETE CASCADE,
  org_id uuid NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
  app_kind text NOT NULL CHECK (app_kind IN ('pod', 'group')),
  app_id uuid NOT NULL,
  app_slug text NOT NULL,
  image text,
  -- [{image, digest}]: the Dockerfile's external images (FROM, --from=) and their manifest digests at the pull
  base_images jsonb NOT NULL DEFAULT '[]',
  built_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX org_app_builds_app ON org_app_builds (org_id, app_id, built_at DESC);

-- A proposal: the base image of an app's build now has another digest.
CREATE TABLE org_image_refreshes (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
  app_kind text NOT NULL CHECK (app_kind IN ('pod', 'group')),
  app_id uuid NOT NULL,
  app_slug text NOT NULL,
  build_id uuid NOT NULL,
  base_image text NOT NULL,
  old_digest text,
  new_digest text NOT NULL,
  status text NOT NULL DEFAULT 'proposed' CHECK (status IN ('proposed', 'dismissed', 'rebuilding', 'done', 'failed')),
  -- the rebuild started for it, and why it failed
  rebuild_build_id uuid,
  error text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (org_id, app_id, base_image, new_digest)
);
CREATE INDEX org_image_refreshes_org ON org_image_refreshes (org_id, created_at DESC);
CREATE INDEX org_image_refreshes_rebuild ON org_image_refreshes (rebuild_build_id) WHERE rebuild_build_id IS NOT NULL;

-- Dismissed versions: never proposed again for that app, even after the proposal itself is pruned.
CREATE TABLE org_image_refresh_dismissals (
  org_id uuid NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
  app_id uuid NOT NULL,
  base_image text NOT NULL,
  digest text NOT NULL,
  dismissed_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (org_id, app_id, base_image, digest)
);
