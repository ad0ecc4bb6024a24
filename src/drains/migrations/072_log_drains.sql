-- Log drains (issue 31): an owner's pod logs or the edge's access logs shipped to an HTTPS endpoint (batched
-- NDJSON) or to syslog (RFC 5424 over TCP or TLS). Headers for HTTPS (an Authorization token) are sealed at rest
-- and shown as fingerprints. The counters are what the user sees of the drain's health.
CREATE TABLE log_drains (
  id uuid PRIMARY KEY,
  owner_kind text NOT NULL CHECK (owner_kind IN ('account', 'org', 'partner_child')),
  owner_id uuid NOT NULL,
  account_id uuid NOT NULL REFERENCES accounts (id),
  name text NOT NULL,
  -- https://… (NDJSON), syslog://host:port or syslog+tls://host:port
  destination text NOT NULL,
  headers_sealed text,
  headers_meta jsonb NOT NULL DEFAULT '{}',
  -- what is shipped: pods' output, or the edge's access lines; target_* narrows it to one app (null: all the owner's)
  source text NOT NULL CHECK (source IN ('pods', 'edge')),
  target_kind text CHECK (target_kind IN ('pod', 'group', 'site')),
  target_id uuid,
  enabled boolean NOT NULL DEFAULT true,
  delivered_count bigint NOT NULL DEFAULT 0,
  dropped_count bigint NOT NULL DEFAULT 0,
  failed_attempts bigint NOT NULL DEFAULT 0,
  -- failures since the last success: the back-off doubles with each
  failures_in_row integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz,
  last_error text,
  last_error_at timestamptz,
  last_success_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  removed_at timestamptz
);
CREATE INDEX log_drains_owner ON log_drains (owner_kind, owner_id) WHERE removed_at IS NULL;

-- Where each drain is in each of its sources: a pod (source_id = the pod's id; the time of the last line shipped
-- in ns since the epoch, and how many lines of exactly that time were shipped) or the edge's lines (source_id
-- 'edge'; the (tx, seq) of the last row shipped). A shipper claims a row until claimed_until, so one sender at a
-- time works on it, and a sender killed mid-batch leaves a claim that lapses: the batch is sent again (at least once).
CREATE TABLE log_drain_cursors (
  drain_id uuid NOT NULL REFERENCES log_drains (id) ON DELETE CASCADE,
  source_id text NOT NULL,
  at_ns bigint NOT NULL DEFAULT 0,
  at_count integer NOT NULL DEFAULT 0,
  edge_tx xid8 NOT NULL DEFAULT '0',
  edge_seq bigint NOT NULL DEFAULT 0,
  claimed_until timestamptz,
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (drain_id, source_id)
);
