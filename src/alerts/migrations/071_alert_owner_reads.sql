-- Owner-wide alert rules read the last minutes of every pod and app of one owner (src/alerts/figures.ts): indexes by
-- owner and minute, so a rule's read does not scan every owner's recent rows.
CREATE INDEX pod_samples_owner_minute ON pod_samples (owner_kind, owner_id, minute);
CREATE INDEX edge_minute_stats_owner_minute ON edge_minute_stats (owner_kind, owner_id, minute);
