-- Partner site locks and visitor sessions (issue 26, src/partner/access/README.md): a child's static site locked to
-- a tenant, a department (with sub-departments) or invited subject refs; visitors vouched by the partner with a
-- one-time link that becomes a visitor session (cookie) at the edge. Every edge process keeps lock visibilities
-- and decisions for a few seconds and drops them on NOTIFY partner_site_access.

CREATE TABLE partner_site_locks (
  site_id uuid PRIMARY KEY,
  partner_id uuid NOT NULL REFERENCES partners (account_id),
  child_id uuid NOT NULL REFERENCES partner_children (id),
  mode text NOT NULL CHECK (mode IN ('tenant', 'department', 'invited')),
  tenant_ref text NOT NULL,
  department_code text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT partner_site_locks_department CHECK (mode <> 'department' OR department_code IS NOT NULL)
);
CREATE INDEX partner_site_locks_child ON partner_site_locks (child_id);

-- Invite lists per (site, tenant): a subject_ref matches only under the tenant it was invited for (spec 13).
CREATE TABLE partner_site_invites (
  site_id uuid NOT NULL,
  tenant_ref text NOT NULL,
  subject_ref text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (site_id, tenant_ref, subject_ref)
);

-- A vouched visitor: first a one-time link (link_hash, minutes), then, once followed, a session (session_hash,
-- hours) bound to one site. Only SHA-256 of the 32-byte random secrets is stored.
CREATE TABLE partner_visitor_sessions (
  id uuid PRIMARY KEY,
  partner_id uuid NOT NULL REFERENCES partners (account_id),
  child_id uuid NOT NULL REFERENCES partner_children (id),
  site_id uuid NOT NULL,
  subject_ref text NOT NULL,
  tenant_ref text,
  department_code text,
  return_path text NOT NULL,
  link_hash bytea UNIQUE,
  link_expires_at timestamptz NOT NULL,
  session_hash bytea UNIQUE,
  expires_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX partner_visitor_sessions_site ON partner_visitor_sessions (site_id);
CREATE INDEX partner_visitor_sessions_child ON partner_visitor_sessions (child_id);
CREATE INDEX partner_visitor_sessions_expiry ON partner_visitor_sessions (coalesce(expires_at, link_expires_at));

CREATE FUNCTION notify_partner_site_access() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('partner_site_access', '');
  RETURN NULL;
END $$;

CREATE TRIGGER partner_site_locks_changed AFTER INSERT OR UPDATE OR DELETE ON partner_site_locks
  FOR EACH STATEMENT EXECUTE FUNCTION notify_partner_site_access();
CREATE TRIGGER partner_site_invites_changed AFTER INSERT OR UPDATE OR DELETE ON partner_site_invites
  FOR EACH STATEMENT EXECUTE FUNCTION notify_partner_site_access();
-- new sessions change no kept decision (an unknown cookie is never kept); revoked ones must go everywhere (per row:
-- pruning nothing announces nothing)
CREATE TRIGGER partner_visitor_sessions_revoked AFTER DELETE ON partner_visitor_sessions
  FOR EACH ROW EXECUTE FUNCTION notify_partner_site_access();
CREATE TRIGGER partner_departments_access_changed AFTER INSERT OR UPDATE OF parent_code OR DELETE ON partner_departments
  FOR EACH STATEMENT EXECUTE FUNCTION notify_partner_site_access();
CREATE TRIGGER partners_access_changed AFTER UPDATE OF visitor_login_url ON partners
  FOR EACH STATEMENT EXECUTE FUNCTION notify_partner_site_access();

-- A deleted child's visitor sessions and locks go with it (its sites pass to the partner account).
CREATE FUNCTION partner_child_access_gone() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM partner_visitor_sessions WHERE child_id = NEW.id;
  DELETE FROM partner_site_invites WHERE site_id IN (SELECT site_id FROM partner_site_locks WHERE child_id = NEW.id);
  DELETE FROM partner_site_locks WHERE child_id = NEW.id;
  RETURN NULL;
END $$;

CREATE TRIGGER partner_children_access_gone AFTER UPDATE OF deleted_at ON partner_children
  FOR EACH ROW WHEN (NEW.deleted_at IS NOT NULL AND OLD.deleted_at IS NULL)
  EXECUTE FUNCTION partner_child_access_gone();
