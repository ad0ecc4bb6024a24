-- Suite billing (issue 27, src/suite/README.md "Billing"): usage of company assets reported per member and hour to
-- the member's suite account, and the members stop-on-exhausted paused.

-- Per suite-billed organization: hours before reported_through have their report rows written (the next run
-- starts there); the row is also the organization's lock while a run writes.
CREATE TABLE suite_billing_cursors (
  org_id uuid PRIMARY KEY REFERENCES orgs (id) ON DELETE CASCADE,
  reported_through timestamptz NOT NULL
);

-- One row per (organization, member, hour) with usage: written first, then sent with the idempotency key, then
-- marked reported (and posted in the ledger). usage_micro is the hour's exact usage; carry_in + usage =
-- amount_krw * 1e6 + carry_out, and the next row of the member starts from carry_out: nothing lost or doubled.
-- status: pending (to send), reported (the suite has it), nothing (under 1 KRW: only the carry moves).
CREATE TABLE suite_usage_reports (
  org_id uuid NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
  account_id uuid NOT NULL REFERENCES accounts (id),
  hour timestamptz NOT NULL,
  usage_micro bigint NOT NULL CHECK (usage_micro >= 0),
  carry_in_micro bigint NOT NULL CHECK (carry_in_micro >= 0 AND carry_in_micro < 1000000),
  amount_krw bigint NOT NULL CHECK (amount_krw >= 0),
  carry_out_micro bigint NOT NULL CHECK (carry_out_micro >= 0 AND carry_out_micro < 1000000),
  idempotency_key text NOT NULL UNIQUE,
  status text NOT NULL CHECK (status IN ('pending', 'reported', 'nothing')),
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  last_error text,
  -- the suite's record, and the suite account it went to
  record_id text,
  company_id text,
  user_id text,
  reported_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (org_id, account_id, hour),
  CHECK (carry_in_micro + usage_micro = amount_krw * 1000000 + carry_out_micro),
  CHECK ((status = 'nothing') = (amount_krw = 0))
);
CREATE INDEX suite_usage_reports_pending ON suite_usage_reports (next_attempt_at) WHERE status = 'pending';

-- Per member: the last allowance the suite answered, and what stop-on-exhausted paused (ids of pods and
-- databases, resumed when the allowance is back or the setting is turned off).
CREATE TABLE suite_member_billing (
  org_id uuid NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
  account_id uuid NOT NULL REFERENCES accounts (id),
  limit_krw bigint,
  used_krw bigint,
  remaining_krw bigint,
  resets_at timestamptz,
  contact text,
  checked_at timestamptz,
  paused_at timestamptz,
  paused_ids text[] NOT NULL DEFAULT '{}',
  PRIMARY KEY (org_id, account_id)
);
