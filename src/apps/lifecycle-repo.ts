/**
 * The apps area's SQL for billing and the reconciler's housekeeping (metering.ts, cleanup.ts): the pods billing
 * meters, holding and releasing an owner's paid pods, and the count of containers cleaned up on a pod.
 */
import { allRows, type Queryable, returnedIds } from "../store/db.js";
import type { Owner } from "../kernel/owner.js";
import type { MeteredTable } from "../kernel/metered-repo.js";

export interface BillablePodRow {
  id: string;
  owner_kind: Owner["kind"];
  owner_id: string;
  account_id: string;
  size: string;
}

/** pods meter while meant to run (desired running, whatever a crash says: the capacity is held for it) */
export const BILLABLE_PODS: MeteredTable = {
  table: "pods",
  columns: "id, owner_kind, owner_id, account_id, size",
  billable: "desired_state = 'running' AND state <> 'removed'",
};

export async function podNames(q: Queryable, ids: string[]): Promise<{ id: string; name: string; slug: string }[]> {
  return allRows<{ id: string; name: string; slug: string }>(
    q,
    "SELECT id, name, slug FROM pods WHERE id = ANY($1::uuid[])",
    [ids],
  );
}

/** The hosts of those of the pods that are placed. */
export async function placedPods(q: Queryable, ids: string[]): Promise<{ id: string; host_id: string }[]> {
  return allRows<{ id: string; host_id: string }>(
    q,
    "SELECT id, host_id FROM pods WHERE id = ANY($1::uuid[]) AND host_id IS NOT NULL",
    [ids],
  );
}

/**
 * What a billing hold stops: running pods, and pods stopped for idleness (else the next request would wake them
 * past the hold, since a start's admission lets a known size pass). Resumed, both run (an idle one stops again
 * after its idle time).
 */
const HELD = "('running', 'idle_stopped')";

/** the owner's pods, or only one member's of them (their creator) when $3 is not null */
const OWNED_BY = "owner_kind = $1 AND owner_id = $2 AND ($3::uuid IS NULL OR account_id = $3)";

/** Stops the owner's (or one member's) running paid pods (not nano) with the reason kept; their ids. */
async function holdPods(q: Queryable, owner: Owner, accountId: string | null, reason: string): Promise<string[]> {
  return returnedIds(
    q,
    `UPDATE pods SET desired_state = 'stopped', paused_reason = $4, state_reason = $4, updated_at = now()
      WHERE ${OWNED_BY} AND desired_state IN ${HELD} AND size <> 'nano' RETURNING id`,
    [owner.kind, owner.id, accountId, reason],
  );
}

/** Starts again the owner's (or one member's) pods this reason stopped; their ids. */
async function releasePods(q: Queryable, owner: Owner, accountId: string | null, reason: string): Promise<string[]> {
  return returnedIds(
    q,
    `UPDATE pods SET desired_state = 'running', paused_reason = NULL, state_reason = NULL, state = 'creating',
        generation = generation + 1, crash_count = 0, next_restart_at = NULL, awake_since = now(), updated_at = now()
      WHERE ${OWNED_BY} AND desired_state = 'stopped' AND paused_reason = $4 RETURNING id`,
    [owner.kind, owner.id, accountId, reason],
  );
}

/** Stops the owner's running paid pods (not nano) with the reason kept; their ids. */
export const pausePods = (q: Queryable, owner: Owner, reason: string) => holdPods(q, owner, null, reason);

/** Starts again the owner's pods this reason stopped; their ids. */
export const resumePods = (q: Queryable, owner: Owner, reason: string) => releasePods(q, owner, null, reason);

/** pausePods for one member's pods of the owner (their creator is `accountId`). */
export const pauseMemberPods = (q: Queryable, owner: Owner, accountId: string, reason: string) =>
  holdPods(q, owner, accountId, reason);

/** resumePods for one member's pods: only those this reason stopped. */
export const resumeMemberPods = (q: Queryable, owner: Owner, accountId: string, reason: string) =>
  releasePods(q, owner, accountId, reason);

export async function countCleanedContainers(q: Queryable, podId: string, removed: number): Promise<void> {
  await q.query("UPDATE pods SET cleaned_containers = cleaned_containers + $2 WHERE id = $1", [podId, removed]);
}
