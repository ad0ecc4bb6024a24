-- Sandboxes (issue 10): short-lived isolated containers for running code. The row is written before its
-- container, so a crash mid-creation leaves a row the reaper cleans; the container carries the runtime's
-- own timeout, so it never outlives expires_at even while no platform process runs.

CREATE TABLE sandboxes (
  id uuid PRIMARY KEY,
  owner_kind text NOT NULL CHECK (owner_kind IN ('account', 'org', 'partner_child')),
  owner_id uuid NOT NULL,
  account_id uuid NOT NULL REFERENCES accounts (id),
  image text NOT NULL,
  -- false: no network interface at all; true: the owner's network (isolated from every other owner's)
  network boolean NOT NULL,
  timeout_s integer NOT NULL CHECK (timeout_s BETWEEN 10 AND 3600),
  -- the host whose runtime holds the container (its reaper removes it)
  host_id uuid NOT NULL REFERENCES hosts (id),
  state text NOT NULL CHECK (state IN ('running', 'expired', 'removed')),
  state_reason text,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  -- set once the container runs; a running row without it is a creation that never finished
  started_at timestamptz,
  ended_at timestamptz
);
CREATE INDEX sandboxes_owner ON sandboxes (owner_kind, owner_id, created_at DESC);
CREATE INDEX sandboxes_host_running ON sandboxes (host_id, expires_at) WHERE state = 'running';
