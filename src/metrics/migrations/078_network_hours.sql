-- Network of pods and groups in the hourly roll-up (issue 31): the bytes received and sent during the hour, the sum
-- of the minutes' increases of the runtime's cumulative counters (pod_samples.net_in_bytes / net_out_bytes, kept
-- since 067). Null: no minute of the hour had a known increase (rows rolled before this migration, first samples).
ALTER TABLE pod_hours ADD COLUMN net_rx_bytes bigint, ADD COLUMN net_tx_bytes bigint;
ALTER TABLE group_hours ADD COLUMN net_rx_bytes bigint, ADD COLUMN net_tx_bytes bigint;
