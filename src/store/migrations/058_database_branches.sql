-- Database branches (issue 30, src/databases/README.md "Branches"): a database that is a copy of another as of a moment.
ALTER TABLE databases
  ADD COLUMN parent_id uuid REFERENCES databases (id),
  -- the moment asked for; null: the moment the copy runs (now, and every reset)
  ADD COLUMN branch_target timestamptz,
  -- the moment the branch's data is a copy of, set when the copy is done
  ADD COLUMN branched_at timestamptz;
CREATE INDEX databases_parent ON databases (parent_id) WHERE parent_id IS NOT NULL;
