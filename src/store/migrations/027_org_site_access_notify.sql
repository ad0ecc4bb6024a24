-- Organization visibility at the edge (src/orgs/visibility): every edge process keeps the visibility of company
-- sites and its decisions for a few seconds, and drops them on NOTIFY org_site_access, sent by every write that
-- can change a decision: a site's visibility, grants, memberships (joining, leaving, role and department moves),
-- the department tree, and the organization's default and maximum visibility.

CREATE FUNCTION notify_org_site_access() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('org_site_access', '');
  RETURN NULL;
END $$;

CREATE TRIGGER org_site_access_changed AFTER INSERT OR UPDATE OR DELETE ON org_site_access
  FOR EACH STATEMENT EXECUTE FUNCTION notify_org_site_access();
CREATE TRIGGER org_site_grants_changed AFTER INSERT OR UPDATE OR DELETE ON org_site_grants
  FOR EACH STATEMENT EXECUTE FUNCTION notify_org_site_access();
CREATE TRIGGER org_members_access_changed AFTER INSERT OR UPDATE OR DELETE ON org_members
  FOR EACH STATEMENT EXECUTE FUNCTION notify_org_site_access();
CREATE TRIGGER org_departments_access_changed AFTER INSERT OR UPDATE OF parent_id OR DELETE ON org_departments
  FOR EACH STATEMENT EXECUTE FUNCTION notify_org_site_access();
CREATE TRIGGER orgs_access_changed AFTER UPDATE OF default_visibility, max_visibility OR DELETE ON orgs
  FOR EACH STATEMENT EXECUTE FUNCTION notify_org_site_access();

-- pending sharing requests by site (superseded when the site's visibility is set otherwise)
CREATE INDEX org_approvals_site ON org_approvals (app_kind, app_id) WHERE status = 'pending';
