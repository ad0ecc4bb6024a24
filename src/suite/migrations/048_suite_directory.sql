-- The suite's directory part (issue 27, src/suite/README.md "Directory"): departments mirror the linked suite
-- company's org chart, matched on the suite's stable unit id (never the name). A unit the suite no longer lists is
-- tombstoned (removed_at), not deleted: members, invitations, budgets and site rules pointing at it keep working,
-- while department lists, pickers and the HR syncs leave it out.
ALTER TABLE org_departments ADD COLUMN suite_unit_id text, ADD COLUMN removed_at timestamptz;
CREATE UNIQUE INDEX org_departments_suite_unit ON org_departments (org_id, suite_unit_id)
  WHERE suite_unit_id IS NOT NULL;
-- codes stay unique among live departments only: an HR sync may reuse the code of a tombstoned one
ALTER TABLE org_departments DROP CONSTRAINT org_departments_org_id_code_key;
CREATE UNIQUE INDEX org_departments_code_live ON org_departments (org_id, code) WHERE removed_at IS NULL;

-- One row per suite-linked organization: a sync asked for (a login, the route) and the last one that finished.
-- The periodic sweep runs the asked-for ones and those older than SUITE_SYNC_MINUTES, so a job lost to a kill -9
-- is made up for at the next sweep.
CREATE TABLE suite_directory_syncs (
  org_id uuid PRIMARY KEY REFERENCES orgs (id) ON DELETE CASCADE,
  requested_at timestamptz,
  synced_at timestamptz,
  last_error text,
  last_error_at timestamptz
);
