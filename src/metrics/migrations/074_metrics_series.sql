-- Issue 31, the rest of the metrics (src/metrics/README.md): sites' bytes per minute, pod groups' members,
-- databases' per-minute samples, and the hourly roll-up (kept 90 days) with its watermark.

-- bytes sent per minute (static sites' series); old rows count 0
ALTER TABLE edge_minute_stats ADD COLUMN bytes_out bigint NOT NULL DEFAULT 0;

-- the group a pod belonged to at the sample (a group's series adds its members' samples minute by minute)
ALTER TABLE pod_samples ADD COLUMN group_id uuid;
CREATE INDEX pod_samples_group ON pod_samples (group_id, minute) WHERE group_id IS NOT NULL;

-- What a managed PostgreSQL server said once a minute (src/metrics/database-sampler.ts). Counters are stored both
-- as the server's totals (the next sample's delta starts from them, across platform restarts) and as the delta
-- since the previous sample (null: first sample, or the server's counters were reset), over covered_seconds; a
-- second sample in the same minute adds its delta to the row's.
CREATE TABLE database_samples (
  database_id uuid NOT NULL,
  minute timestamptz NOT NULL,
  sampled_at timestamptz NOT NULL,
  owner_kind text NOT NULL,
  owner_id uuid NOT NULL,
  connections integer NOT NULL,
  max_connections integer NOT NULL,
  commits_total bigint NOT NULL,
  blocks_hit_total bigint NOT NULL,
  blocks_read_total bigint NOT NULL,
  commits bigint,
  blocks_hit bigint,
  blocks_read bigint,
  covered_seconds double precision,
  size_bytes bigint NOT NULL,
  replication_lag_bytes bigint,
  replication_lag_seconds double precision,
  base_backup_age_seconds double precision,
  archived_wal_age_seconds double precision,
  PRIMARY KEY (database_id, minute)
);
CREATE INDEX database_samples_minute ON database_samples (minute);

-- Hourly roll-ups (metrics.rollup): sums of additive figures, the highest of gauges, CPU's average with the number
-- of minutes it averages. Kept 90 days (metrics.prune).
CREATE TABLE edge_hour_stats (
  target_kind text NOT NULL,
  target_id uuid NOT NULL,
  hour timestamptz NOT NULL,
  owner_kind text NOT NULL,
  owner_id uuid NOT NULL,
  requests bigint NOT NULL,
  status_4xx bigint NOT NULL,
  status_5xx bigint NOT NULL,
  bytes_out bigint NOT NULL,
  latency bigint[] NOT NULL,
  PRIMARY KEY (target_kind, target_id, hour)
);
CREATE INDEX edge_hour_stats_hour ON edge_hour_stats (hour);

CREATE TABLE pod_hours (
  pod_id uuid NOT NULL,
  hour timestamptz NOT NULL,
  owner_kind text NOT NULL,
  owner_id uuid NOT NULL,
  group_id uuid,
  cpu_percent double precision,
  cpu_minutes integer NOT NULL,
  memory_bytes bigint,
  memory_limit_bytes bigint,
  restarts integer NOT NULL,
  PRIMARY KEY (pod_id, hour)
);
CREATE INDEX pod_hours_hour ON pod_hours (hour);

-- a group's hour from its per-minute sums over members (CPU and memory add across members at each minute)
CREATE TABLE group_hours (
  group_id uuid NOT NULL,
  hour timestamptz NOT NULL,
  owner_kind text NOT NULL,
  owner_id uuid NOT NULL,
  cpu_percent double precision,
  cpu_minutes integer NOT NULL,
  memory_bytes bigint,
  restarts integer NOT NULL,
  replicas integer NOT NULL,
  PRIMARY KEY (group_id, hour)
);
CREATE INDEX group_hours_hour ON group_hours (hour);

CREATE TABLE database_hours (
  database_id uuid NOT NULL,
  hour timestamptz NOT NULL,
  owner_kind text NOT NULL,
  owner_id uuid NOT NULL,
  connections integer NOT NULL,
  max_connections integer NOT NULL,
  commits bigint,
  blocks_hit bigint,
  blocks_read bigint,
  covered_seconds double precision,
  size_bytes bigint NOT NULL,
  replication_lag_bytes bigint,
  replication_lag_seconds double precision,
  base_backup_age_seconds double precision,
  archived_wal_age_seconds double precision,
  PRIMARY KEY (database_id, hour)
);
CREATE INDEX database_hours_hour ON database_hours (hour);

-- Hours before rolled_through are in the hour tables; the API reads minutes from there on (one row, one writer at a
-- time: the roll-up locks it).
CREATE TABLE metrics_rollup (
  singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  rolled_through timestamptz NOT NULL
);
