-- Organization card billing and invoices (issue 14, src/orgs/invoices; README "Invoices, card, bank transfers and
-- statistics"). An organization in billing_mode 'card' pays in arrears: its KRW wallet is postpaid while the card
-- is registered, metering debits usage as usual, and each month's usage since registration becomes an invoice
-- charged to the organization's saved card (billing_cards, owner 'org'); the payment credits the wallet back.

-- The card registration in force: pay-as-you-go since registered_at; removing the card restores previous_mode.
CREATE TABLE org_card_billing (
  org_id uuid PRIMARY KEY REFERENCES orgs (id) ON DELETE CASCADE,
  registered_at timestamptz NOT NULL,
  registered_by uuid NOT NULL REFERENCES accounts (id),
  previous_mode text NOT NULL CHECK (previous_mode IN ('personal', 'prepaid'))
);

-- One invoice per organization and period start, whatever the number of workers, runs or restarts (the unique
-- key; finalisation also holds the organization's advisory lock). monthly: [max(month start, registration),
-- month end); closing: the month so far when the card is removed. No foreign key to orgs: invoices are financial
-- records and outlive the organization, as its wallet and ledger postings do.
CREATE TABLE org_invoices (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL,
  month text NOT NULL CHECK (month ~ '^[0-9]{4}-[0-9]{2}$'),
  kind text NOT NULL CHECK (kind IN ('monthly', 'closing')),
  period_start timestamptz NOT NULL,
  period_end timestamptz NOT NULL CHECK (period_end > period_start),
  -- the organization wallet's usage postings for intervals starting in the period, whole KRW (the ledger's sum)
  total_krw bigint NOT NULL CHECK (total_krw >= 0),
  status text NOT NULL CHECK (status IN ('pending', 'paid', 'failed')),
  -- charge attempts made (numbers the provider idempotency keys and order ids), and declines since the last card change
  attempts integer NOT NULL DEFAULT 0,
  failures integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz,
  -- an attempt under way: set by the claim, cleared by its outcome; a stale one is retried with the same key
  charging_since timestamptz,
  last_attempt_at timestamptz,
  failure_code text,
  failure_message text,
  -- the saved card (billing_cards.id) the attempt under way charges: a retry of the attempt charges the same card,
  -- even if another was registered since, so the provider replays the first try instead of charging a second card
  attempt_card_id uuid,
  -- the card of the last attempt (display data only) and the provider's payment (PaymentIntent id, paymentKey)
  card_provider text CHECK (card_provider IN ('stripe', 'toss')),
  card_brand text,
  card_last4 text,
  provider_ref text,
  payment_transaction_id uuid REFERENCES ledger_transactions (id),
  -- a total under the card providers' minimum charge is not charged: the platform waives it (platform:adjustments pays)
  waived boolean NOT NULL DEFAULT false,
  paid_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT org_invoices_once UNIQUE (org_id, period_start),
  CHECK ((status = 'paid') = (paid_at IS NOT NULL))
);
CREATE INDEX org_invoices_org ON org_invoices (org_id, period_start DESC);
CREATE INDEX org_invoices_due ON org_invoices (next_attempt_at) WHERE status = 'pending';

-- The invoice's usage by member (usage_records.account_id: who created the asset) and kind, micro-won, as finalised.
CREATE TABLE org_invoice_lines (
  invoice_id uuid NOT NULL REFERENCES org_invoices (id) ON DELETE CASCADE,
  account_id uuid NOT NULL,
  kind text NOT NULL,
  usage_microkrw bigint NOT NULL CHECK (usage_microkrw >= 0),
  PRIMARY KEY (invoice_id, account_id, kind)
);
