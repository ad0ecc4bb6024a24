-- Custom domains (issue 11): host names outside the apps domain that serve one app (a pod, a pod group or a
-- static site, named by its slug). The edge serves a domain only once it is verified (DNS TXT or CNAME), and
-- only while its slug still names an app of the domain's owner. One domain belongs to one app platform-wide.

CREATE TABLE custom_domains (
  id uuid PRIMARY KEY,
  owner_kind text NOT NULL CHECK (owner_kind IN ('account', 'org', 'partner_child')),
  owner_id uuid NOT NULL,
  -- the account that added it
  account_id uuid NOT NULL REFERENCES accounts (id),
  -- lower case, ASCII (xn-- for internationalized names), no trailing dot: unique across every owner
  domain text NOT NULL UNIQUE CHECK (domain = lower(domain) AND domain <> '' AND length(domain) <= 253),
  -- the app when the domain was added (kinds as the edge's route sources name them: pod, group, site)
  app_kind text NOT NULL,
  app_id text NOT NULL,
  -- what the edge resolves: <app_slug>.<APPS_DOMAIN>, an app of the same owner
  app_slug text NOT NULL,
  -- the value of the TXT record _platform-verify.<domain> that proves control
  verification_token text NOT NULL,
  status text NOT NULL CHECK (status IN ('pending', 'verified')),
  verified_at timestamptz,
  verified_by text CHECK (verified_by IN ('txt', 'cname')),
  -- the last verification attempt and what it found (a sentence), for the user
  last_checked_at timestamptz,
  last_check text,
  created_at timestamptz NOT NULL DEFAULT now(),
  CHECK ((status = 'verified') = (verified_at IS NOT NULL))
);
CREATE INDEX custom_domains_owner ON custom_domains (owner_kind, owner_id, created_at);
CREATE INDEX custom_domains_app ON custom_domains (owner_kind, owner_id, app_slug);

-- every edge process drops what it cached for custom hosts when a domain starts or stops being served
CREATE FUNCTION notify_domain_route() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    PERFORM pg_notify('domain_routes', OLD.domain);
  ELSE
    PERFORM pg_notify('domain_routes', NEW.domain);
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER custom_domains_route_changed AFTER UPDATE OF status, app_slug, domain ON custom_domains
  FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status OR OLD.app_slug IS DISTINCT FROM NEW.app_slug
                     OR OLD.domain IS DISTINCT FROM NEW.domain)
  EXECUTE FUNCTION notify_domain_route();
CREATE TRIGGER custom_domains_route_removed AFTER DELETE ON custom_domains
  FOR EACH ROW WHEN (OLD.status = 'verified')
  EXECUTE FUNCTION notify_domain_route();
