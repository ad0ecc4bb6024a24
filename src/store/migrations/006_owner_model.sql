-- The owner model (README, "Owners"): every resource row names the party that owns and pays for it,
-- beside the account that acted (account_id: the creator or requester). Owners are personal accounts
-- today; organizations ('org') and partners' child identities ('partner_child') own resources the same way.

ALTER TABLE ledger_wallets DROP CONSTRAINT ledger_wallets_owner_kind_check;
ALTER TABLE ledger_wallets ADD CONSTRAINT ledger_wallets_owner_kind_check
  CHECK (owner_kind IN ('account', 'org', 'partner', 'partner_child', 'platform'));

DO $$
DECLARE t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['databases', 'database_backups', 'tokens', 'audit_log', 'usage_records',
                           'billing_topups', 'billing_bank_transfers', 'billing_cards', 'billing_auto_recharge',
                           'billing_provider_customers', 'billing_business_profiles', 'cli_error_reports'] LOOP
    EXECUTE format('ALTER TABLE %I ADD COLUMN owner_kind text NOT NULL DEFAULT ''account''
                      CHECK (owner_kind IN (''account'', ''org'', ''partner_child''))', t);
    EXECUTE format('ALTER TABLE %I ADD COLUMN owner_id uuid', t);
    EXECUTE format('UPDATE %I SET owner_id = account_id', t);
    EXECUTE format('ALTER TABLE %I ALTER COLUMN owner_id SET NOT NULL', t);
    EXECUTE format('ALTER TABLE %I ALTER COLUMN owner_kind DROP DEFAULT', t);
  END LOOP;
END $$;

CREATE INDEX databases_owner ON databases (owner_kind, owner_id, created_at);
CREATE INDEX database_backups_owner ON database_backups (owner_kind, owner_id, finished_at DESC);
CREATE INDEX audit_log_owner ON audit_log (owner_kind, owner_id, id DESC);
CREATE INDEX usage_records_owner ON usage_records (owner_kind, owner_id, interval_start);
CREATE INDEX billing_topups_owner ON billing_topups (owner_kind, owner_id, created_at DESC);
CREATE INDEX billing_bank_transfers_owner ON billing_bank_transfers (owner_kind, owner_id, created_at DESC);
