-- Per-app, per-minute counts of what the edge answered (issue 31's metrics, src/metrics), flushed with site_stats'
-- daily rows in the same transaction. Latency is the same fixed-bucket histogram (src/edge/stats/histogram.ts).
-- Kept 7 days (src/metrics prunes them).
CREATE TABLE edge_minute_stats (
  target_kind text NOT NULL,
  target_id uuid NOT NULL,
  minute timestamptz NOT NULL,
  owner_kind text NOT NULL,
  owner_id uuid NOT NULL,
  requests bigint NOT NULL DEFAULT 0,
  status_4xx bigint NOT NULL DEFAULT 0,
  status_5xx bigint NOT NULL DEFAULT 0,
  latency bigint[] NOT NULL,
  PRIMARY KEY (target_kind, target_id, minute)
);
CREATE INDEX edge_minute_stats_minute ON edge_minute_stats (minute);
