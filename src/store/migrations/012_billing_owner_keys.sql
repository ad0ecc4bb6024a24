-- Billing by owner (README, "Owners"): the singletons of billing (saved card, auto-recharge settings,
-- provider customer, business profile) are one per owner, not per acting account; account_id stays as
-- the member who last set them. And the owners billing paused for an overdue wallet, so it resumes
-- exactly those once the wallet is settled (areas pause and resume through the kernel's lifecycles).

ALTER TABLE billing_auto_recharge DROP CONSTRAINT billing_auto_recharge_pkey;
ALTER TABLE billing_auto_recharge ADD PRIMARY KEY (owner_kind, owner_id);

ALTER TABLE billing_business_profiles DROP CONSTRAINT billing_business_profiles_pkey;
ALTER TABLE billing_business_profiles ADD PRIMARY KEY (owner_kind, owner_id);

ALTER TABLE billing_provider_customers DROP CONSTRAINT billing_provider_customers_pkey;
ALTER TABLE billing_provider_customers ADD PRIMARY KEY (owner_kind, owner_id, provider);

DROP INDEX billing_cards_live;
CREATE UNIQUE INDEX billing_cards_live ON billing_cards (owner_kind, owner_id) WHERE deleted_at IS NULL;

CREATE TABLE billing_overdue_pauses (
  owner_kind text NOT NULL CHECK (owner_kind IN ('account', 'org', 'partner_child')),
  owner_id uuid NOT NULL,
  paused_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (owner_kind, owner_id)
);

-- Metering inserts one usage record per billable resource and interval (10,000 resources: 120,000 rows an
-- hour). Its two foreign keys that cost a row lock per record each go: account_id is the actor as the
-- resource's area reports it (the owner columns never had one), and transaction_id is written in the
-- same transaction as the posting it names, by the same code. wallet_id keeps its key.
ALTER TABLE usage_records DROP CONSTRAINT usage_records_account_id_fkey;
ALTER TABLE usage_records DROP CONSTRAINT usage_records_transaction_id_fkey;

-- Reports read usage by owner (usage_records_owner); the index by acting account has no reader left and costs
-- every metering insert.
DROP INDEX usage_records_account;
