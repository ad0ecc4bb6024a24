import { randomUUID } from "node:crypto";
import { allRows, anyRows, oneRow, type Queryable, setClauses } from "../store/db.js";
import type { Owner } from "../kernel/owner.js";
import { finderOf } from "../store/find.js";
import type { NamedOwnerColumns } from "../kernel/owned-repo.js";
import type { Checks } from "./checks/spec.js";

/** A pod as stored: the spec and desired state the user asked for, beside what the reconciler observed. */
export interface PodRow extends NamedOwnerColumns {
  group_id: string | null;
  template_id: string | null;
  linked_email: string | null;
  linked_service: string | null;
  image: string;
  port: number | null;
  command: string[] | null;
  env_sealed: string;
  size: string;
  gpu: string | null;
  volumes: { volume_id: string; path: string }[];
  databases: string[];
  generation: number;
  /** idle_stopped: stopped after idle_stop_seconds without requests; the next request through the edge wakes it */
  desired_state: "running" | "stopped" | "removed" | "idle_stopped";
  /** unknown: its organization external host is offline (src/orgs/hosts); pending: waiting for a volume */
  state: "pending" | "creating" | "running" | "stopped" | "failed" | "removed" | "unknown";
  state_reason: string | null;
  paused_reason: string | null;
  host_id: string | null;
  address: string | null;
  network_address: string | null;
  serving_generation: number | null;
  restart_count: number;
  crash_count: number;
  next_restart_at: Date | null;
  cleaned_containers: number; // containers left by cut rollouts or removals, cleaned up (cleanup.ts)
  /** issue 29: declared checks (null: default TCP readiness), their observed status, the readiness verdict */
  checks: Checks | null;
  check_status: Record<string, unknown>;
  ready: boolean;
  stop_grace_seconds: number;
  rollout_deadline_seconds: number;
  /** the release the wanted generation runs (src/apps/releases), and the last automatic rollback */
  release: number;
  rollback: Record<string, unknown> | null;
  /** scale-to-zero (src/apps/idle): null never; the idle clock runs from awake_since or the last request */
  idle_stop_seconds: number | null;
  awake_since: Date;
  woken_at: Date | null;
  /** times woken by a request (the wake keeps the generation) */
  wakes: number;
  /** the published address of the container an idle stop kept (migration 080); a wake routes to it at once */
  kept_address: string | null;
  created_at: Date;
  updated_at: Date;
  removed_at: Date | null;
}

/** Of the rows a slug names, a live one before removed ones, newest first (pods and pod groups). */
export const REMOVED_LAST = "(desired_state = 'removed'), created_at DESC";

/** The owner's pod by id or slug (removed ones too, newest first, so a GET after DELETE answers removed). */
export const findPod = finderOf<PodRow>({ table: "pods", refColumn: "slug", order: REMOVED_LAST });

export async function podById(q: Queryable, id: string, opts: { forUpdate?: boolean } = {}): Promise<PodRow | null> {
  return oneRow<PodRow>(q, `SELECT * FROM pods WHERE id = $1 ${opts.forUpdate ? "FOR UPDATE" : ""}`, [id]);
}

/**
 * The owner's live pods, oldest first. `refs` narrows them for instance-limited keys: a pod is permitted by
 * its own id or slug, or by its group's id or slug (a group's id covers its member pods).
 */
export async function listPods(
  q: Queryable,
  owner: Owner,
  refs: string[] | null,
  opts: { linked?: boolean } = {},
): Promise<PodRow[]> {
  return allRows<PodRow>(
    q,
    `SELECT p.* FROM pods p LEFT JOIN pod_groups g ON g.id = p.group_id
      WHERE p.owner_kind = $1 AND p.owner_id = $2 AND p.desired_state <> 'removed'
        AND (p.linked_email IS NOT NULL) = $4
        AND ($3::text[] IS NULL OR p.id::text = ANY($3) OR p.slug = ANY($3) OR g.id::text = ANY($3) OR g.slug = ANY($3))
      ORDER BY p.created_at`,
    [owner.kind, owner.id, refs, opts.linked ?? false],
  );
}

export async function insertPod(
  q: Queryable,
  row: Omit<
    PodRow,
    | "created_at"
    | "updated_at"
    | "cleaned_containers"
    | "check_status"
    | "ready"
    | "release"
    | "rollback"
    | "awake_since"
    | "woken_at"
    | "wakes"
    | "kept_address"
  >,
) {
  await q.query(
    `INSERT INTO pods (id, owner_kind, owner_id, account_id, name, slug, group_id, template_id, linked_email,
       linked_service, image, port, command, env_sealed, size, gpu, volumes, databases, generation, desired_state,
       state, state_reason, paused_reason, host_id, address, network_address, serving_generation, restart_count,
       crash_count, next_restart_at, removed_at, checks, stop_grace_seconds, rollout_deadline_seconds, idle_stop_seconds)
     VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17,$18,$19,$20,$21,$22,$23,$24,$25,$26,$27,$28,$29,$30,$31,
       $32,$33,$34,$35)`,
    [
      row.id,
      row.owner_kind,
      row.owner_id,
      row.account_id,
      row.name,
      row.slug,
      row.group_id,
      row.template_id,
      row.linked_email,
      row.linked_service,
      row.image,
      row.port,
      row.command === null ? null : JSON.stringify(row.command),
      row.env_sealed,
      row.size,
      row.gpu,
      JSON.stringify(row.volumes),
      JSON.stringify(row.databases),
      row.generation,
      row.desired_state,
      row.state,
      row.state_reason,
      row.paused_reason,
      row.host_id,
      row.address,
      row.network_address,
      row.serving_generation,
      row.restart_count,
      row.crash_count,
      row.next_restart_at,
      row.removed_at,
      row.checks === null ? null : JSON.stringify(row.checks),
      row.stop_grace_seconds,
      row.rollout_deadline_seconds,
      row.idle_stop_seconds,
    ],
  );
}

/** Fields a user change may set; a spec change bumps the generation the containers must follow. */
export type PodSpecChange = Partial<
  Pick<
    PodRow,
    | "image"
    | "env_sealed"
    | "size"
    | "gpu"
    | "port"
    | "command"
    | "checks"
    | "stop_grace_seconds"
    | "rollout_deadline_seconds"
  >
>;

export async function updatePodSpec(q: Queryable, id: string, change: PodSpecChange): Promise<PodRow> {
  const values: unknown[] = [id];
  const sets = setClauses(change, values, (k, v) =>
    (k === "command" || k === "checks") && v !== null ? JSON.stringify(v) : v,
  );
  const { rows } = await q.query<PodRow>(
    `UPDATE pods SET ${[...sets, "generation = generation + 1", "crash_count = 0", "next_restart_at = NULL", "updated_at = now()"].join(", ")}
      WHERE id = $1 RETURNING *`,
    values,
  );
  return rows[0]!;
}

/** Desired state change; `bump` makes the reconciler replace the containers (restart). */
export async function setDesired(
  q: Queryable,
  id: string,
  desired: PodRow["desired_state"],
  opts: { bump?: boolean; state?: PodRow["state"]; reason?: string | null; pausedReason?: string | null } = {},
): Promise<PodRow> {
  const { rows } = await q.query<PodRow>(
    `UPDATE pods SET desired_state = $2, generation = generation + $3::int, crash_count = 0, next_restart_at = NULL,
        state = COALESCE($4, state), state_reason = CASE WHEN $6 THEN $5 ELSE state_reason END,
        paused_reason = CASE WHEN $8 THEN $7 ELSE paused_reason END,
        removed_at = CASE WHEN $2 = 'removed' THEN now() ELSE removed_at END,
        awake_since = CASE WHEN $2 = 'running' AND desired_state <> 'running' THEN now() ELSE awake_since END,
        updated_at = now()
      WHERE id = $1 RETURNING *`,
    [
      id,
      desired,
      opts.bump ? 1 : 0,
      opts.state ?? null,
      opts.reason ?? null,
      opts.reason !== undefined,
      opts.pausedReason ?? null,
      opts.pausedReason !== undefined,
    ],
  );
  return rows[0]!;
}

/**
 * What the reconciler observed; written only while the row is still what it worked on: the same generation
 * and the same desired state (a stop or a billing pause does not bump the generation; a newer change wins).
 * `awakeNow`: the idle clock starts again (a woken pod's, once it serves: src/apps/README.md).
 */
export async function recordObserved(
  q: Queryable,
  seen: Pick<PodRow, "id" | "generation" | "desired_state">,
  observed: Partial<
    Pick<
      PodRow,
      | "state"
      | "state_reason"
      | "address"
      | "network_address"
      | "serving_generation"
      | "crash_count"
      | "restart_count"
      | "next_restart_at"
      | "ready"
      | "kept_address"
    >
  >,
  opts: { awakeNow?: boolean } = {},
): Promise<boolean> {
  const values: unknown[] = [seen.id, seen.generation, seen.desired_state];
  const sets = setClauses(observed, values);
  if (opts.awakeNow) sets.push("awake_since = now()");
  if (!sets.length) return true;
  const { rowCount } = await q.query(
    `UPDATE pods SET ${sets.join(", ")}, updated_at = now() WHERE id = $1 AND generation = $2 AND desired_state = $3`,
    values,
  );
  return rowCount === 1;
}

/** Pods this host must reconcile: every pod placed here that is not finally removed. */
export async function podsOnHost(q: Queryable, hostId: string): Promise<PodRow[]> {
  return allRows<PodRow>(
    q,
    "SELECT * FROM pods WHERE host_id = $1 AND NOT (state = 'removed' AND desired_state = 'removed')",
    [hostId],
  );
}

/** Every pod id this host ever held that is not finally removed: containers not in it are orphans. */
export async function knownPodIds(q: Queryable, hostId: string): Promise<Set<string>> {
  const { rows } = await q.query<{ id: string }>(
    "SELECT id FROM pods WHERE host_id = $1 AND NOT (state = 'removed' AND desired_state = 'removed')",
    [hostId],
  );
  return new Set(rows.map((r) => r.id));
}

export async function recordRollout(
  q: Queryable,
  pod: Pick<PodRow, "id" | "generation" | "image">,
  reason: string,
): Promise<void> {
  await q.query(
    `INSERT INTO pod_rollouts (id, pod_id, generation, image, reason, state, release)
     VALUES ($1, $2, $3, $4, $5, 'pending', (SELECT release FROM pods WHERE id = $2))
      ON CONFLICT (pod_id, generation) DO NOTHING`,
    [randomUUID(), pod.id, pod.generation, pod.image, reason],
  );
}

/** The rollout of `generation` serves now; older ones are replaced. */
export { podEvent, rolloutCrashed, rolloutServing } from "./rollout-events-repo.js";

/** Live pods that attach the database. */
export async function podsAttachedTo(q: Queryable, databaseId: string): Promise<PodRow[]> {
  return allRows<PodRow>(
    q,
    "SELECT * FROM pods WHERE databases @> $1::jsonb AND desired_state <> 'removed' ORDER BY created_at",
    [JSON.stringify([databaseId])],
  );
}

/** A new generation for every running pod attached to the database: each rolls with the new credentials. */
export async function bumpAttached(q: Queryable, databaseId: string): Promise<PodRow[]> {
  return allRows<PodRow>(
    q,
    `UPDATE pods SET generation = generation + 1, crash_count = 0, next_restart_at = NULL, updated_at = now()
      WHERE databases @> $1::jsonb AND desired_state = 'running' RETURNING *`,
    [JSON.stringify([databaseId])],
  );
}

/** A group's id and slug: an instance-limited key naming either covers the group's member pods. */
export async function groupRefs(q: Queryable, groupId: string): Promise<string[]> {
  const { rows } = await q.query<{ id: string; slug: string }>("SELECT id, slug FROM pod_groups WHERE id = $1", [
    groupId,
  ]);
  return rows.flatMap((r) => [r.id, r.slug]);
}

/** The linked app (deployed on behalf of the e-mail user) among the owner's pods. */
export async function findLinkedPod(q: Queryable, owner: Owner, ref: string): Promise<PodRow | null> {
  const pod = await findPod(q, owner, ref);
  return pod && pod.linked_email !== null && pod.desired_state !== "removed" ? pod : null;
}

export { findRollout, type RolloutRow } from "./rollout/repo.js";

/**
 * Claims the pod for one reconcile by this process: free, ours, expired, or held by a process whose lease lock is
 * free (it died). The claim is a row, not a session lock, so a reconcile holds no store connection while it waits
 * for containers.
 */
export async function claimReconcile(q: Queryable, podId: string, processId: string): Promise<boolean> {
  const { rowCount } = await q.query(
    `UPDATE pods SET reconcile_process = $2, reconcile_until = now() + interval '5 minutes'
      WHERE id = $1 AND (reconcile_process IS NULL OR reconcile_process = $2 OR reconcile_until < now()
        OR pg_try_advisory_xact_lock(hashtext('process:' || reconcile_process::text)))`,
    [podId, processId],
  );
  return rowCount === 1;
}

export async function releaseReconcile(q: Queryable, podId: string, processId: string): Promise<void> {
  await q.query(
    "UPDATE pods SET reconcile_process = NULL, reconcile_until = NULL WHERE id = $1 AND reconcile_process = $2",
    [podId, processId],
  );
}

/** Whether a live pod group holds the slug (pods and groups share the <slug>.<APPS_DOMAIN> names). */
export async function groupSlugTaken(q: Queryable, slug: string): Promise<boolean> {
  return anyRows(q, "SELECT 1 FROM pod_groups WHERE slug = $1 AND desired_state <> 'removed'", [slug]);
}

/** Organization external hosts (agent-feed.ts): live (not deleted) and active (meant to run) pods per host. */
type HostPods = { live: number; active: number };
export async function podCountsOnHosts(q: Queryable, hostIds: string[]): Promise<Map<string, HostPods>> {
  const { rows } = await q.query<{ host_id: string; live: number; active: number }>(
    `SELECT host_id, count(*)::int AS live, count(*) FILTER (WHERE desired_state = 'running')::int AS active
       FROM pods WHERE host_id = ANY($1::text[]) AND desired_state <> 'removed' GROUP BY host_id`,
    [hostIds],
  );
  return new Map(rows.map((r) => [r.host_id, { live: r.live, active: r.active }]));
}

/** An external host went offline: its pods that ran or were starting are `unknown` until its agent reports. */
export async function markPodsUnknown(q: Queryable, hostId: string, reason: string): Promise<number> {
  const { rowCount } = await q.query(
    `UPDATE pods SET state = 'unknown', state_reason = $2, updated_at = now()
      WHERE host_id = $1 AND state IN ('creating', 'running') AND desired_state <> 'removed'`,
    [hostId, reason],
  );
  return rowCount ?? 0;
}
