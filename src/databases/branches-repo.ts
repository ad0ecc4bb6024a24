import { allRows, type Queryable } from "../store/db.js";
import type { DatabaseRow } from "./repo.js";

// database branches (migration 058: databases.parent_id, branch_target, branched_at)

/** The live branches of an instance (not deleted), oldest first. */
export async function branchesOf(q: Queryable, parentId: string): Promise<DatabaseRow[]> {
  return allRows<DatabaseRow>(
    q,
    `SELECT * FROM databases WHERE parent_id = $1 AND state <> 'removed' AND desired_state <> 'removed' AND purged_at IS NULL
      ORDER BY created_at`,
    [parentId],
  );
}
