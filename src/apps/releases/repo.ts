/**
 * SQL of releases (issue 29): a numbered release per change of image, command, env, size, port or checks,
 * its outcome as rollouts report it, the checks' observed status on the pod, and the automatic rollback.
 */
import { randomUUID } from "node:crypto";
import { allRows, oneRow, type Queryable } from "../../store/db.js";
import type { PodRow } from "../repo.js";

export type ReleaseOutcome = "pending" | "serving" | "superseded" | "rolled_back" | "failed";

/** What every release records, a pod's or a group's: its number, the change, who made it and how it ended. */
export interface ReleaseRecord {
  id: string;
  number: number;
  changed: string[];
  description: string;
  created_by: string | null;
  outcome: ReleaseOutcome;
  outcome_reason: string | null;
  created_at: Date;
  ended_at: Date | null;
}

/** What of a pod a release keeps (and a rollback restores). */
export type ReleaseSpec = Pick<
  PodRow,
  | "image"
  | "port"
  | "command"
  | "env_sealed"
  | "size"
  | "gpu"
  | "checks"
  | "stop_grace_seconds"
  | "rollout_deadline_seconds"
>;

export interface ReleaseRow extends ReleaseRecord, ReleaseSpec {
  pod_id: string;
}

/** A spec's columns as the statements write them, in the order of the table: image to rollout_deadline_seconds. */
const specParams = (spec: ReleaseSpec): unknown[] => [
  spec.image,
  spec.port,
  spec.command === null ? null : JSON.stringify(spec.command),
  spec.env_sealed,
  spec.size,
  spec.gpu,
  spec.checks === null ? null : JSON.stringify(spec.checks),
  spec.stop_grace_seconds,
  spec.rollout_deadline_seconds,
];

/** The pod's next release, numbered after its newest; the pod row points at it. */
export async function insertRelease(
  q: Queryable,
  podId: string,
  spec: ReleaseSpec,
  meta: { changed: string[]; description: string; createdBy: string | null },
): Promise<number> {
  const { rows } = await q.query<{ number: number }>(
    `INSERT INTO pod_releases (id, pod_id, number, image, port, command, env_sealed, size, gpu, checks,
       stop_grace_seconds, rollout_deadline_seconds, changed, description, created_by)
     SELECT $1, $2, COALESCE(max(number), 0) + 1, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14
       FROM pod_releases WHERE pod_id = $2
     RETURNING number`,
    [randomUUID(), podId, ...specParams(spec), meta.changed, meta.description, meta.createdBy],
  );
  const number = rows[0]!.number;
  await q.query("UPDATE pods SET release = $2 WHERE id = $1", [podId, number]);
  return number;
}

export async function listReleases(q: Queryable, podId: string): Promise<ReleaseRow[]> {
  return allRows<ReleaseRow>(q, "SELECT * FROM pod_releases WHERE pod_id = $1 ORDER BY number DESC", [podId]);
}

export async function releaseByNumber(q: Queryable, podId: string, number: number): Promise<ReleaseRow | null> {
  return oneRow<ReleaseRow>(q, "SELECT * FROM pod_releases WHERE pod_id = $1 AND number = $2", [podId, number]);
}

/** The rollout of `generation` carries the release it runs (what an automatic rollback returns to). */
export async function tagRollout(q: Queryable, podId: string, generation: number, release: number): Promise<void> {
  await q.query("UPDATE pod_rollouts SET release = $3 WHERE pod_id = $1 AND generation = $2", [
    podId,
    generation,
    release,
  ]);
}

export async function rolloutOf(
  q: Queryable,
  podId: string,
  generation: number,
): Promise<{ release: number | null; created_at: Date } | null> {
  return oneRow<{ release: number | null; created_at: Date }>(
    q,
    "SELECT release, created_at FROM pod_rollouts WHERE pod_id = $1 AND generation = $2",
    [podId, generation],
  );
}

/** The release now serves; the one served before is superseded. */
export async function releaseServing(q: Queryable, podId: string, number: number): Promise<void> {
  await markServing(q, "pod_releases", "pod_id", podId, number);
}

/** One statement for pods' and groups' releases: `number` serves, earlier serving or pending ones are superseded. */
export async function markServing(
  q: Queryable,
  table: "pod_releases" | "pod_group_releases",
  keyColumn: "pod_id" | "group_id",
  id: string,
  number: number,
): Promise<void> {
  await q.query(
    `UPDATE ${table} SET outcome = CASE WHEN number = $2 THEN 'serving' ELSE 'superseded' END,
        ended_at = CASE WHEN number = $2 THEN ended_at ELSE COALESCE(ended_at, now()) END
      WHERE ${keyColumn} = $1 AND (number = $2 OR outcome IN ('serving', 'pending') AND number < $2)`,
    [id, number],
  );
}

export async function endRelease(
  q: Queryable,
  podId: string,
  number: number,
  outcome: "rolled_back" | "failed",
  reason: string,
): Promise<void> {
  await q.query(
    `UPDATE pod_releases SET outcome = $3, outcome_reason = $4, ended_at = now()
      WHERE pod_id = $1 AND number = $2 AND outcome IN ('pending', 'serving')`,
    [podId, number, outcome, reason],
  );
}

/**
 * Puts the pod back on `release`'s spec as a new generation (the serving one keeps serving until it is
 * replaced), with the rollback recorded on the row. Only while the row is still at `generation`.
 */
export async function restoreRelease(
  q: Queryable,
  podId: string,
  generation: number,
  release: ReleaseRow,
  rollback: Record<string, unknown>,
  stateReason: string,
): Promise<PodRow | null> {
  return oneRow<PodRow>(
    q,
    `UPDATE pods SET image = $3, port = $4, command = $5, env_sealed = $6, size = $7, gpu = $8, checks = $9,
        stop_grace_seconds = $10, rollout_deadline_seconds = $11, release = $12, rollback = $13,
        state_reason = $14, generation = generation + 1, crash_count = 0, next_restart_at = NULL, updated_at = now()
      WHERE id = $1 AND generation = $2 AND desired_state = 'running' RETURNING *`,
    [podId, generation, ...specParams(release), release.number, JSON.stringify(rollback), stateReason],
  );
}

/** One check's observed status on the pod (check_status.<kind>), for the generation it ran against. */
export async function recordCheckStatus(
  q: Queryable,
  podId: string,
  kind: string,
  status: Record<string, unknown>,
): Promise<void> {
  await q.query("UPDATE pods SET check_status = jsonb_set(check_status, ARRAY[$2], $3::jsonb) WHERE id = $1", [
    podId,
    kind,
    JSON.stringify(status),
  ]);
}

/** The serving replica's readiness verdict; the edge routes only to ready pods (trigger NOTIFY pod_routes). */
export async function setReady(q: Queryable, podId: string, generation: number, ready: boolean): Promise<void> {
  await q.query("UPDATE pods SET ready = $3 WHERE id = $1 AND serving_generation = $2 AND ready <> $3", [
    podId,
    generation,
    ready,
  ]);
}

/** This host's pods serving a replica that has liveness or declared readiness to watch. */
export async function watchedPods(q: Queryable, hostId: string): Promise<PodRow[]> {
  return allRows<PodRow>(
    q,
    `SELECT * FROM pods WHERE host_id = $1 AND desired_state = 'running' AND state = 'running'
        AND serving_generation IS NOT NULL AND (checks ? 'liveness' OR checks ? 'readiness')`,
    [hostId],
  );
}
