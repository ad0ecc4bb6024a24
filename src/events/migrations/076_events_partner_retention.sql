-- Issue 31 fixes. A partner's webhook endpoint receives its children's events too; child_ids narrows that to some
-- children (NULL: every child, '{}': none). Retention deletes old events and deliveries by created_at.
ALTER TABLE webhook_endpoints ADD COLUMN child_ids uuid[];
CREATE INDEX events_created ON events (created_at);
CREATE INDEX webhook_deliveries_created ON webhook_deliveries (created_at);
