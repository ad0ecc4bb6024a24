-- Alert rules (issue 31): a metric of a resource (or of the whole owner), a comparison, a threshold, a window and how
-- long the condition must hold. The evaluator (alerts.evaluate, every minute) keeps the state here:
-- ok -> pending -> firing -> ok. src/alerts/README.md.
CREATE TABLE alert_rules (
  id uuid PRIMARY KEY,
  owner_kind text NOT NULL CHECK (owner_kind IN ('account', 'org', 'partner_child')),
  owner_id uuid NOT NULL,
  -- the member responsible for it (its creator)
  account_id uuid NOT NULL REFERENCES accounts (id),
  name text NOT NULL,
  -- both null: the rule watches every resource of the owner
  resource_kind text CHECK (resource_kind IN ('pod', 'pod_group', 'site')),
  resource_id uuid,
  metric text NOT NULL,
  comparison text NOT NULL CHECK (comparison IN ('>', '>=', '<', '<=')),
  threshold double precision NOT NULL,
  window_minutes integer NOT NULL CHECK (window_minutes BETWEEN 1 AND 1440),
  for_minutes integer NOT NULL CHECK (for_minutes BETWEEN 0 AND 1440),
  enabled boolean NOT NULL DEFAULT true,
  -- where transitions are told: the creating account's e-mail when the rule was made
  notify_email text NOT NULL,
  state text NOT NULL DEFAULT 'ok' CHECK (state IN ('ok', 'pending', 'firing')),
  state_since timestamptz NOT NULL DEFAULT now(),
  -- firing only: since when the condition has been false (it resolves once that lasts for_minutes, at least 1)
  clearing_since timestamptz,
  last_value double precision,
  last_evaluated_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CHECK ((resource_kind IS NULL) = (resource_id IS NULL))
);
CREATE UNIQUE INDEX alert_rules_name ON alert_rules (owner_kind, owner_id, name);
CREATE INDEX alert_rules_enabled ON alert_rules (id) WHERE enabled;

-- Each firing of a rule, resolved or not; the newest 100 per rule are kept (the evaluator prunes as it fires).
CREATE TABLE alert_firings (
  id uuid PRIMARY KEY,
  rule_id uuid NOT NULL REFERENCES alert_rules (id) ON DELETE CASCADE,
  fired_at timestamptz NOT NULL,
  fired_value double precision,
  resolved_at timestamptz,
  resolved_value double precision,
  -- why it resolved: the condition cleared, or the rule was changed, disabled or deleted
  resolved_reason text
);
CREATE INDEX alert_firings_rule ON alert_firings (rule_id, fired_at DESC);
