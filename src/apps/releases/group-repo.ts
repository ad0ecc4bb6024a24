/**
 * SQL of pod groups' releases (issue 29): a numbered release per change of the members' spec, its outcome as
 * the group's batch rollout reports it (src/apps/rollout/groups.ts), and the group's pointer to its release.
 */
import { randomUUID } from "node:crypto";
import { allRows, oneRow, type Queryable } from "../../store/db.js";
import type { GroupSpec } from "../groups/repo.js";
import { markServing, type ReleaseRecord } from "./repo.js";

export interface GroupReleaseRow extends ReleaseRecord {
  group_id: string;
  spec: GroupSpec;
}

/** The group's next release, numbered after its newest; the group row points at it. */
export async function insertGroupRelease(
  q: Queryable,
  groupId: string,
  spec: GroupSpec,
  meta: { changed: string[]; description: string; createdBy: string | null; outcome: "pending" | "serving" },
): Promise<number> {
  const { rows } = await q.query<{ number: number }>(
    `INSERT INTO pod_group_releases (id, group_id, number, spec, changed, description, created_by, outcome)
     SELECT $1, $2, COALESCE(max(number), 0) + 1, $3, $4, $5, $6, $7 FROM pod_group_releases WHERE group_id = $2
     RETURNING number`,
    [randomUUID(), groupId, JSON.stringify(spec), meta.changed, meta.description, meta.createdBy, meta.outcome],
  );
  const number = rows[0]!.number;
  await q.query("UPDATE pod_groups SET release = $2 WHERE id = $1", [groupId, number]);
  return number;
}

export async function listGroupReleases(q: Queryable, groupId: string): Promise<GroupReleaseRow[]> {
  return allRows<GroupReleaseRow>(q, "SELECT * FROM pod_group_releases WHERE group_id = $1 ORDER BY number DESC", [
    groupId,
  ]);
}

export async function groupReleaseByNumber(
  q: Queryable,
  groupId: string,
  number: number,
): Promise<GroupReleaseRow | null> {
  return oneRow<GroupReleaseRow>(q, "SELECT * FROM pod_group_releases WHERE group_id = $1 AND number = $2", [
    groupId,
    number,
  ]);
}

/** The group's rollout finished: its release serves, the ones before it are superseded. */
export async function groupReleaseServing(q: Queryable, groupId: string, number: number): Promise<void> {
  await markServing(q, "pod_group_releases", "group_id", groupId, number);
}

/**
 * A member's new release failed and the group goes back: the group's release ends rolled back, and the group
 * points at the release that serves again (the newest one that served).
 */
export async function groupReleaseRolledBack(q: Queryable, groupId: string, reason: string): Promise<void> {
  await q.query(
    `UPDATE pod_group_releases r SET outcome = 'rolled_back', outcome_reason = $2, ended_at = now()
       FROM pod_groups g WHERE g.id = $1 AND r.group_id = g.id AND r.number = g.release AND r.outcome = 'pending'`,
    [groupId, reason],
  );
  await q.query(
    `UPDATE pod_groups SET release = COALESCE((SELECT max(number) FROM pod_group_releases
        WHERE group_id = $1 AND outcome = 'serving'), release) WHERE id = $1`,
    [groupId],
  );
}
