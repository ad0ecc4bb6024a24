-- What the runtime said of each pod's serving container, once a minute (src/metrics/sampler.ts). cpu_percent is the
-- percent of one CPU over the minute; restart_count is the pod's count at the sample (the API answers increases).
-- Kept 7 days (the metrics.prune job).
CREATE TABLE pod_samples (
  pod_id uuid NOT NULL,
  minute timestamptz NOT NULL,
  owner_kind text NOT NULL,
  owner_id uuid NOT NULL,
  cpu_percent double precision,
  memory_bytes bigint,
  memory_limit_bytes bigint,
  restart_count integer NOT NULL DEFAULT 0,
  net_in_bytes bigint,
  net_out_bytes bigint,
  PRIMARY KEY (pod_id, minute)
);
CREATE INDEX pod_samples_minute ON pod_samples (minute);
