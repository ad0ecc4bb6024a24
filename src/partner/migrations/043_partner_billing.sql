-- Partner postpaid billing (issue 26, src/partner/billing/README.md): child usage settled into the partner's wallet
-- per 5-minute window, monthly invoices with a statement per child, and the mails the partner and operator get.

-- One settlement per child and meter window (the primary key): the child's usage postings of that window moved from
-- its postpaid wallet to the partner's (ledger key partner-settle:<child>:<window-start>), in the same transaction.
CREATE TABLE partner_settlements (
  child_id uuid NOT NULL,
  window_start timestamptz NOT NULL,
  partner_id uuid NOT NULL,
  amount_krw bigint NOT NULL CHECK (amount_krw > 0),
  transaction_id uuid NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (child_id, window_start)
);
CREATE INDEX partner_settlements_partner ON partner_settlements (partner_id, window_start);

-- The windows settled so far (one row per window, written by the transaction that settled it): the next run
-- continues after the latest, so windows a stopped platform missed are caught up.
CREATE TABLE partner_settlement_windows (
  window_start timestamptz PRIMARY KEY,
  children integer NOT NULL,
  settled_at timestamptz NOT NULL DEFAULT now()
);

-- One invoice per partner and month (unique), finalized after the month's last window was settled. Amounts in
-- micro-units of currency (KRW: 1 won = 1,000,000); total = usage - adjustment.
CREATE TABLE partner_invoices (
  id uuid PRIMARY KEY,
  partner_id uuid NOT NULL,
  month text NOT NULL CHECK (month ~ '^[0-9]{4}-[0-9]{2}$'),
  period_start timestamptz NOT NULL,
  period_end timestamptz NOT NULL CHECK (period_end > period_start),
  currency text NOT NULL DEFAULT 'KRW',
  usage_micro bigint NOT NULL CHECK (usage_micro >= 0),
  adjustment_micro bigint NOT NULL CHECK (adjustment_micro >= 0 AND adjustment_micro <= usage_micro),
  total_micro bigint NOT NULL CHECK (total_micro = usage_micro - adjustment_micro),
  status text NOT NULL CHECK (status IN ('unpaid', 'paid')),
  paid_at timestamptz,
  payment_transaction_id uuid,
  created_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT partner_invoices_once UNIQUE (partner_id, period_start)
);
CREATE INDEX partner_invoices_unpaid ON partner_invoices (created_at) WHERE status = 'unpaid';

-- The invoice's statement per child: the settlements of the month, as finalized.
CREATE TABLE partner_invoice_statements (
  invoice_id uuid NOT NULL REFERENCES partner_invoices (id) ON DELETE CASCADE,
  child_id uuid NOT NULL,
  external_ref text NOT NULL,
  windows integer NOT NULL,
  usage_micro bigint NOT NULL CHECK (usage_micro >= 0),
  PRIMARY KEY (invoice_id, child_id)
);

-- Mails claimed once (the primary key): limit_80 / limit_100 per partner and month, invoice_unpaid per invoice.
CREATE TABLE partner_billing_notices (
  partner_id uuid NOT NULL,
  kind text NOT NULL CHECK (kind IN ('limit_80', 'limit_100', 'invoice_unpaid')),
  period text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (partner_id, kind, period)
);

-- What each partner's children were settled per month (whole won), kept by the settling transaction: the limit
-- mails compare it with the monthly limit without summing the month's settlements on every run.
CREATE TABLE partner_month_usage (
  partner_id uuid NOT NULL,
  month text NOT NULL CHECK (month ~ '^[0-9]{4}-[0-9]{2}$'),
  krw bigint NOT NULL CHECK (krw >= 0),
  PRIMARY KEY (partner_id, month)
);
