-- What the database watcher last found: WAL continuity since the newest base backup (can the
-- instance be recovered to any moment since then?) and the storage it uses.

ALTER TABLE databases
  ADD COLUMN backup_health jsonb,
  ADD COLUMN storage_used_bytes bigint,
  ADD COLUMN health_checked_at timestamptz;
