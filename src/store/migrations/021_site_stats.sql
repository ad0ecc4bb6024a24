-- Edge statistics (src/edge/stats): one row per app the edge serves (pod, pod group, static site) and UTC day,
-- summed from the periodic flushes of every edge process (INSERT ... ON CONFLICT adds, so any number of
-- processes and flushes merge exactly). Owners are copied onto the row, so an owner's (later an organization's)
-- statistics over a window are one index range (site_stats_owner).
--
-- latency: request counts per fixed log-scale bucket of the response time, added element-wise on upsert:
-- bucket 0 is under 1 ms, bucket i >= 1 is [2^((i-1)/4), 2^(i/4)) ms (about 19 % wide), the last one open-ended
-- (src/edge/stats/histogram.ts). p50/p95 of a day, a window or many apps are read from summed buckets.
CREATE TABLE site_stats (
  target_kind text NOT NULL,
  target_id uuid NOT NULL,
  day date NOT NULL,
  owner_kind text NOT NULL CHECK (owner_kind IN ('account', 'org', 'partner_child')),
  owner_id uuid NOT NULL,
  requests bigint NOT NULL,
  status_4xx bigint NOT NULL,
  status_5xx bigint NOT NULL,
  bytes_out bigint NOT NULL,
  latency bigint[] NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (target_kind, target_id, day)
);
CREATE INDEX site_stats_owner ON site_stats (owner_kind, owner_id, day);
