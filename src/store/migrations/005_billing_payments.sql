-- Billing part B: payments. Card top-ups (Stripe, Toss Payments), saved cards, auto-recharge, the provider
-- webhook log, bank-transfer requests. Money reaches wallets only through the ledger (004), whose idempotency
-- keys are derived from these rows' ids, so a payment is credited once whatever path reports it.

CREATE TABLE billing_topups (
  id uuid PRIMARY KEY,
  account_id uuid NOT NULL REFERENCES accounts (id),
  provider text NOT NULL CHECK (provider IN ('stripe', 'toss')),
  currency text NOT NULL CHECK (currency IN ('USD', 'KRW')),
  -- what the provider charges, in its smallest unit: USD cents, KRW won
  amount bigint NOT NULL CHECK (amount > 0),
  -- what the wallet receives, in ledger units: USD micro-dollars, KRW won
  credit_amount bigint NOT NULL CHECK (credit_amount > 0),
  origin text NOT NULL DEFAULT 'manual' CHECK (origin IN ('manual', 'auto_recharge')),
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'succeeded', 'failed', 'refunded')),
  -- the provider's object: Stripe PaymentIntent id, Toss paymentKey
  provider_ref text,
  -- the provider's own status word, as last seen
  provider_status text,
  -- Toss orderId (6-64 of [A-Za-z0-9_-]); also sent to Stripe as metadata
  order_id text NOT NULL UNIQUE,
  -- Stripe client_secret for the browser to confirm the PaymentIntent
  client_secret text,
  -- cumulative refunds/cancellations reported by the provider, provider units
  refunded_amount bigint NOT NULL DEFAULT 0 CHECK (refunded_amount >= 0 AND refunded_amount <= amount),
  failure_code text,
  failure_message text,
  credit_transaction_id uuid REFERENCES ledger_transactions (id),
  credited_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX billing_topups_provider_ref ON billing_topups (provider, provider_ref) WHERE provider_ref IS NOT NULL;
CREATE INDEX billing_topups_account ON billing_topups (account_id, created_at DESC);

-- The account's customer object at a provider (Stripe cus_..., Toss customerKey).
CREATE TABLE billing_provider_customers (
  account_id uuid NOT NULL REFERENCES accounts (id),
  provider text NOT NULL CHECK (provider IN ('stripe', 'toss')),
  customer_ref text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (account_id, provider),
  UNIQUE (provider, customer_ref)
);

-- Saved cards: a provider reference and display data only, never a card number.
CREATE TABLE billing_cards (
  id uuid PRIMARY KEY,
  account_id uuid NOT NULL REFERENCES accounts (id),
  provider text NOT NULL CHECK (provider IN ('stripe', 'toss')),
  -- Stripe PaymentMethod id (pm_...), Toss billingKey
  provider_ref text NOT NULL,
  customer_ref text NOT NULL,
  brand text,
  last4 text CHECK (last4 ~ '^[0-9*]{1,4}$'),
  exp_month integer,
  exp_year integer,
  created_at timestamptz NOT NULL DEFAULT now(),
  deleted_at timestamptz
);
-- one saved card per account; saving another replaces it
CREATE UNIQUE INDEX billing_cards_live ON billing_cards (account_id) WHERE deleted_at IS NULL;
CREATE INDEX billing_cards_ref ON billing_cards (provider, provider_ref);

CREATE TABLE billing_auto_recharge (
  account_id uuid PRIMARY KEY REFERENCES accounts (id),
  enabled boolean NOT NULL,
  currency text NOT NULL CHECK (currency IN ('USD', 'KRW')),
  -- provider units (USD cents, KRW won), like top-up amounts
  threshold bigint NOT NULL CHECK (threshold >= 0),
  amount bigint NOT NULL CHECK (amount > 0),
  -- the charge under way: while set, no other charge starts for this account
  in_flight_topup_id uuid REFERENCES billing_topups (id),
  consecutive_failures integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz,
  last_attempt_at timestamptz,
  last_error text,
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX billing_auto_recharge_enabled ON billing_auto_recharge (next_attempt_at) WHERE enabled;

-- Every accepted provider event, once: a redelivered event id changes nothing.
CREATE TABLE billing_webhook_events (
  provider text NOT NULL CHECK (provider IN ('stripe', 'toss')),
  event_id text NOT NULL,
  type text NOT NULL,
  received_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (provider, event_id)
);

CREATE TABLE billing_bank_transfers (
  id uuid PRIMARY KEY,
  account_id uuid NOT NULL REFERENCES accounts (id),
  amount_krw bigint NOT NULL CHECK (amount_krw > 0),
  depositor_name text NOT NULL,
  receipt_type text NOT NULL CHECK (receipt_type IN ('none', 'tax_invoice')),
  tax_invoice jsonb,
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'confirmed', 'cancelled', 'rejected')),
  deposit_reported_at timestamptz,
  reject_reason text,
  credit_transaction_id uuid REFERENCES ledger_transactions (id),
  decided_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CHECK ((receipt_type = 'tax_invoice') = (tax_invoice IS NOT NULL))
);
CREATE INDEX billing_bank_transfers_account ON billing_bank_transfers (account_id, created_at DESC);
CREATE INDEX billing_bank_transfers_status ON billing_bank_transfers (status, created_at);

-- The business details last used for a tax invoice, offered again in the bank-transfer config.
CREATE TABLE billing_business_profiles (
  account_id uuid PRIMARY KEY REFERENCES accounts (id),
  info jsonb NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
);
