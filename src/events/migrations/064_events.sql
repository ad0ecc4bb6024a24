-- Events (issue 31): the outbox. One row per state change users care about, written by recordEvent in the
-- transaction of the change. Readers order rows by (tx, seq) and read only transactions older than every one
-- still running (tx < pg_snapshot_xmin), so the order is final: a cursor never skips a row that commits later.
CREATE TABLE events (
  seq bigserial PRIMARY KEY,
  id uuid NOT NULL UNIQUE,
  tx xid8 NOT NULL DEFAULT pg_current_xact_id(),
  type text NOT NULL,
  owner_kind text NOT NULL CHECK (owner_kind IN ('account', 'org', 'partner_child')),
  owner_id uuid NOT NULL,
  resource_kind text NOT NULL,
  resource_id text NOT NULL,
  data jsonb NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX events_order ON events (tx, seq);
CREATE INDEX events_owner_order ON events (owner_kind, owner_id, tx, seq);

-- listeners (the stream, the webhook dispatcher) read by position from the store; the payload only wakes them
CREATE FUNCTION events_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('platform_events', '');
  RETURN NULL;
END $$;
CREATE TRIGGER events_notify AFTER INSERT ON events FOR EACH STATEMENT EXECUTE FUNCTION events_notify();

-- Webhook endpoints: per owner, with event-type filters ('*' = all) and a signing secret sealed at rest. A rolled
-- secret keeps signing beside the new one until previous_secret_expires_at (Stripe's roll with expiry).
CREATE TABLE webhook_endpoints (
  id uuid PRIMARY KEY,
  owner_kind text NOT NULL CHECK (owner_kind IN ('account', 'org', 'partner_child')),
  owner_id uuid NOT NULL,
  account_id uuid NOT NULL REFERENCES accounts (id),
  url text NOT NULL,
  description text,
  event_types text[] NOT NULL,
  secret_sealed text NOT NULL,
  previous_secret_sealed text,
  previous_secret_expires_at timestamptz,
  enabled boolean NOT NULL DEFAULT true,
  disabled_reason text,
  -- the first failed attempt since the last success; auto-disable counts from here
  failing_since timestamptz,
  -- where the auto-disable mail goes: the creating account's e-mail when the endpoint was made
  notify_email text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  removed_at timestamptz
);
CREATE INDEX webhook_endpoints_owner ON webhook_endpoints (owner_kind, owner_id) WHERE removed_at IS NULL;

-- One delivery per (endpoint, event): the unique pair makes the fan-out idempotent.
CREATE TABLE webhook_deliveries (
  id uuid PRIMARY KEY,
  endpoint_id uuid NOT NULL REFERENCES webhook_endpoints (id),
  event_seq bigint NOT NULL REFERENCES events (seq),
  state text NOT NULL CHECK (state IN ('pending', 'succeeded', 'failed')),
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz,
  last_status integer,
  last_latency_ms integer,
  last_answer text,
  last_error text,
  last_attempt_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (endpoint_id, event_seq)
);
CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, created_at DESC, id);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE state = 'pending';

-- Every attempt, for the delivery log.
CREATE TABLE webhook_attempts (
  id bigserial PRIMARY KEY,
  delivery_id uuid NOT NULL REFERENCES webhook_deliveries (id),
  at timestamptz NOT NULL DEFAULT now(),
  manual boolean NOT NULL DEFAULT false,
  status integer,
  latency_ms integer NOT NULL,
  answer_excerpt text,
  error text
);
CREATE INDEX webhook_attempts_delivery ON webhook_attempts (delivery_id, id);

-- The dispatcher's position in the events order: fan-out and the advance of this row commit together.
CREATE TABLE event_dispatch (
  id integer PRIMARY KEY CHECK (id = 1),
  tx xid8 NOT NULL,
  seq bigint NOT NULL
);
INSERT INTO event_dispatch VALUES (1, '0'::xid8, 0);
