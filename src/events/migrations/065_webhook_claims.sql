-- A delivery attempt in flight holds its delivery until claimed_until: one sender at a time, and a sender killed
-- mid-attempt (kill -9) leaves a claim that lapses, after which the sweep queues the delivery again.
ALTER TABLE webhook_deliveries ADD COLUMN claimed_until timestamptz;
