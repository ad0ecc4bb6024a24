-- Issue 33: one Idempotency-Key makes one resource, across a kill at any instant. The result of a create's
-- transaction (the row it made, before the HTTP layer renders it) is written here by that same transaction
-- (src/http/idempotent-change.ts), so it commits with the resource or not at all. A retry that takes the key
-- over after a crash finds it and answers that resource instead of making another.
ALTER TABLE idempotency_keys ADD COLUMN committed_result text;
