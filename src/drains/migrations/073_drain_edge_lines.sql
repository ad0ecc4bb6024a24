-- The edge's access lines for apps some drain subscribes to, written by each edge process in one statement per
-- flush (never per request) and read by the drain shippers in (tx, seq) order, only from transactions older than
-- every one still running, so a cursor never passes a row that commits later (as the events outbox). Rows older
-- than the drains' lag bound are pruned: a drain that fell that far behind counts them as dropped.
CREATE TABLE drain_edge_lines (
  seq bigserial PRIMARY KEY,
  tx xid8 NOT NULL DEFAULT pg_current_xact_id(),
  target_kind text NOT NULL,
  target_id uuid NOT NULL,
  owner_kind text NOT NULL,
  owner_id uuid NOT NULL,
  at timestamptz NOT NULL,
  line jsonb NOT NULL
);
CREATE INDEX drain_edge_lines_target ON drain_edge_lines (target_kind, target_id, tx, seq);
CREATE INDEX drain_edge_lines_owner ON drain_edge_lines (owner_kind, owner_id, tx, seq);
CREATE INDEX drain_edge_lines_at ON drain_edge_lines (at);
