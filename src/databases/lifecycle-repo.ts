import { returnedIds, type Queryable } from "../store/db.js";
import type { Owner } from "../kernel/owner.js";

/*
 * Pausing one member's company databases (suite billing's stop-on-exhausted, through the kernel's member lifecycle):
 * like pausePaidDatabases / resumePausedDatabases (repo.ts), restricted to the instances the member created.
 */

/** pausePaidDatabases for one member's instances of the owner (their creator is `accountId`). */
export async function pauseMemberDatabases(
  q: Queryable,
  owner: Owner,
  accountId: string,
  reason: string,
): Promise<string[]> {
  return returnedIds(
    q,
    `UPDATE databases SET desired_state = 'paused', status_reason = $4
      WHERE owner_kind = $1 AND owner_id = $2 AND account_id = $3 AND desired_state = 'running' AND state = 'running'
        AND size <> 'dev'
      RETURNING id`,
    [owner.kind, owner.id, accountId, reason],
  );
}

/** resumePausedDatabases for one member's instances: only those this reason stopped. */
export async function resumeMemberDatabases(
  q: Queryable,
  owner: Owner,
  accountId: string,
  reason: string,
): Promise<string[]> {
  return returnedIds(
    q,
    `UPDATE databases SET desired_state = 'running'
      WHERE owner_kind = $1 AND owner_id = $2 AND account_id = $3 AND status_reason = $4 AND desired_state = 'paused'
      RETURNING id`,
    [owner.kind, owner.id, accountId, reason],
  );
}
