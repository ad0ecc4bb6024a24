-- Issue 29: numbered releases of pod groups, like a pod's (051): each change of the members' spec is one,
-- with what changed, who made it and its outcome as the group's batch rollout reports it.
CREATE TABLE pod_group_releases (
  id uuid PRIMARY KEY,
  group_id uuid NOT NULL REFERENCES pod_groups (id),
  number integer NOT NULL,
  -- the members' spec as the group kept it (env sealed, never shown)
  spec jsonb NOT NULL,
  changed text[] NOT NULL,
  description text NOT NULL,
  created_by uuid,
  outcome text NOT NULL DEFAULT 'pending'
    CHECK (outcome IN ('pending', 'serving', 'superseded', 'rolled_back', 'failed')),
  outcome_reason text,
  created_at timestamptz NOT NULL DEFAULT now(),
  ended_at timestamptz,
  UNIQUE (group_id, number)
);

-- the release the group's spec is at
ALTER TABLE pod_groups ADD COLUMN release integer NOT NULL DEFAULT 1;

-- groups made before: their spec as release 1, serving
INSERT INTO pod_group_releases (id, group_id, number, spec, changed, description, outcome, created_at)
SELECT gen_random_uuid(), id, 1, spec, '{}', 'created', 'serving', created_at FROM pod_groups;
