-- The organization audit log and organization API keys (src/orgs/README.md, "API keys and audit").
--
-- Audit rows take their time when they are written (clock_timestamp), not when their transaction began (now()):
-- the id comes from the sequence at that same moment, so id order and created_at order agree up to clock steps.
-- The organization audit log pages by id and turns a from/to range into id bounds through the created_at index
-- below (src/audit/repo.ts, listByOwner), so a range far in the past costs what a recent one does.
ALTER TABLE audit_log ALTER COLUMN created_at SET DEFAULT clock_timestamp();
CREATE INDEX audit_log_owner_created ON audit_log (owner_kind, owner_id, created_at);

-- an organization's live keys are listed, and revoked together, by owner (personal keys by account: tokens_account)
CREATE INDEX tokens_owner_live ON tokens (owner_kind, owner_id) WHERE revoked_at IS NULL;
