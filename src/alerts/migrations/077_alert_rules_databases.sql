-- Alert rules on databases (issue 31): a rule may name one of the owner's databases and watch its per-minute series
-- (database_samples, migration 074). src/alerts/README.md.
ALTER TABLE alert_rules DROP CONSTRAINT alert_rules_resource_kind_check;
ALTER TABLE alert_rules ADD CONSTRAINT alert_rules_resource_kind_check
  CHECK (resource_kind IN ('pod', 'pod_group', 'site', 'database'));
