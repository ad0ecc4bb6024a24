-- Billing part A: double-entry ledger (wallets, transactions, entries) and metering (usage records).
-- Amounts are integers only: KRW in won, USD in micro-dollars. See src/billing/ledger/ledger.ts.

CREATE TABLE ledger_wallets (
  id uuid PRIMARY KEY,
  owner_kind text NOT NULL CHECK (owner_kind IN ('account', 'org', 'partner', 'platform')),
  -- account/org/partner id, or the system wallet's name for platform ('revenue', 'payments-clearing', ...)
  owner_id text NOT NULL,
  currency text NOT NULL CHECK (currency IN ('KRW', 'USD')),
  -- prepaid: debits stop at floor (0) unless they are usage already consumed (overdraft -> overdue)
  -- postpaid / suite: no floor, a negative balance is what the owner owes
  -- system: the platform's side of entries; not locked and not cached (balance = sum of entries)
  policy text NOT NULL CHECK (policy IN ('prepaid', 'postpaid', 'suite', 'system')),
  -- cache of sum(entries.amount), updated in the posting transaction under the row lock; NULL for system wallets
  balance bigint,
  overdue_since timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (owner_kind, owner_id, currency),
  UNIQUE (id, currency),
  CHECK ((policy = 'system') = (balance IS NULL)),
  CHECK ((policy = 'system') = (owner_kind = 'platform'))
);

CREATE TABLE ledger_transactions (
  id uuid PRIMARY KEY,
  -- global order, the cursor of transaction lists
  seq bigserial NOT NULL UNIQUE,
  currency text NOT NULL CHECK (currency IN ('KRW', 'USD')),
  source_type text NOT NULL CHECK (source_type IN ('topup', 'usage', 'refund', 'transfer', 'adjustment', 'invoice')),
  source_id text NOT NULL,
  idempotency_key text NOT NULL,
  memo text,
  created_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT ledger_transactions_idempotency UNIQUE (idempotency_key),
  UNIQUE (id, currency)
);
CREATE INDEX ledger_transactions_source ON ledger_transactions (source_type, source_id);

CREATE TABLE ledger_entries (
  id bigserial PRIMARY KEY,
  transaction_id uuid NOT NULL,
  wallet_id uuid NOT NULL,
  currency text NOT NULL,
  amount bigint NOT NULL CHECK (amount <> 0),
  -- the wallet's balance right after this entry (NULL for system wallets)
  balance_after bigint,
  created_at timestamptz NOT NULL DEFAULT now(),
  -- an entry's currency is its wallet's and its transaction's: no cross-currency legs
  FOREIGN KEY (transaction_id, currency) REFERENCES ledger_transactions (id, currency),
  FOREIGN KEY (wallet_id, currency) REFERENCES ledger_wallets (id, currency)
);
CREATE INDEX ledger_entries_wallet ON ledger_entries (wallet_id, id);
CREATE INDEX ledger_entries_transaction ON ledger_entries (transaction_id);

-- Append-only: entries and transactions are never changed or removed (corrections are new transactions).
CREATE FUNCTION ledger_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'ledger is append-only: % on % refused', TG_OP, TG_TABLE_NAME USING ERRCODE = '55000';
END $$;
CREATE TRIGGER ledger_entries_append_only BEFORE UPDATE OR DELETE ON ledger_entries
  FOR EACH ROW EXECUTE FUNCTION ledger_append_only();
CREATE TRIGGER ledger_transactions_append_only BEFORE UPDATE OR DELETE ON ledger_transactions
  FOR EACH ROW EXECUTE FUNCTION ledger_append_only();

-- Double entry: every INSERT statement into ledger_entries balances per transaction, so the sum of all
-- entries of a currency is always zero whatever inserts them.
CREATE FUNCTION ledger_entries_balanced() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE bad uuid;
BEGIN
  SELECT transaction_id INTO bad FROM new_entries GROUP BY transaction_id HAVING sum(amount) <> 0 LIMIT 1;
  IF bad IS NOT NULL THEN
    RAISE EXCEPTION 'ledger transaction % does not balance', bad USING ERRCODE = '23514';
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER ledger_entries_balanced AFTER INSERT ON ledger_entries
  REFERENCING NEW TABLE AS new_entries FOR EACH STATEMENT EXECUTE FUNCTION ledger_entries_balanced();

-- Metering: one row per resource per interval, whatever the number of workers, ticks or restarts.
CREATE TABLE usage_records (
  id bigserial PRIMARY KEY,
  resource_kind text NOT NULL,
  resource_id uuid NOT NULL,
  account_id uuid NOT NULL REFERENCES accounts (id),
  wallet_id uuid NOT NULL REFERENCES ledger_wallets (id),
  interval_start timestamptz NOT NULL,
  interval_seconds integer NOT NULL CHECK (interval_seconds > 0),
  size text,
  state text NOT NULL,
  storage_gb integer NOT NULL DEFAULT 0,
  -- micro-won (1 KRW = 1,000,000): the exact price of this interval before rounding
  instance_micro bigint NOT NULL CHECK (instance_micro >= 0),
  storage_micro bigint NOT NULL CHECK (storage_micro >= 0),
  -- the ledger transaction that charged the won this record completed (NULL while its micro-won sit in the carry)
  transaction_id uuid REFERENCES ledger_transactions (id),
  created_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT usage_records_once UNIQUE (resource_id, interval_start)
);
CREATE INDEX usage_records_account ON usage_records (account_id, interval_start);

-- Sub-won remainders not yet charged, per wallet: the next interval adds to them, whole won are charged.
CREATE TABLE usage_carry (
  wallet_id uuid PRIMARY KEY REFERENCES ledger_wallets (id),
  micro bigint NOT NULL CHECK (micro >= 0 AND micro < 1000000)
);
