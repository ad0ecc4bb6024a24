-- What apps attached to a database are given (src/databases/attachments.ts).
-- app_password: the owner role's current password, sealed (column name bound into the ciphertext,
-- kernel/secrets.ts), written at creation and by every successful rotation, so an attached pod can be given
-- DATABASE_URL at any time. NULL on instances created before this migration (resolve then falls back to the
-- initial password while it is still kept and was never rotated; otherwise a rotation is needed first).
ALTER TABLE databases ADD COLUMN app_password text;
-- The owner's app networks (CIDRs) last written into the instance's pg_hba beside a non-empty allowlist;
-- NULL when the allowlist is empty (everything is admitted) or never applied. The reconciler compares it with
-- the apps area's current networks and re-applies the allowlist when they differ.
ALTER TABLE databases ADD COLUMN app_cidrs jsonb;
