import { allRows, inTransaction, isUuid, oneRow, type Queryable, returnedIds } from "../store/db.js";
import { recordEvent } from "../events/public.js";
import type { Owner, OwnerKind } from "../kernel/owner.js";
import { finderOf } from "../store/find.js";

export type BuildStatus = "awaiting_upload" | "queued" | "building" | "succeeded" | "failed" | "cancelled";
export const ACTIVE: BuildStatus[] = ["awaiting_upload", "queued", "building"];

export interface BuildRow {
  id: string;
  owner_kind: OwnerKind;
  owner_id: string;
  account_id: string;
  app_kind: "pod" | "group" | null;
  app_id: string | null;
  app_slug: string | null;
  dockerfile: string;
  context_path: string;
  host_id: string;
  status: BuildStatus;
  status_reason: string | null;
  phase: string | null;
  upload_token_hash: Buffer | null;
  upload_expires_at: Date;
  uploaded_at: Date | null;
  source_bytes: string | null;
  image: string | null;
  digest: string | null;
  deployed_at: Date | null;
  deploy_error: string | null;
  cancel_reason: string | null;
  cancel_phase: string | null;
  cancel_detail: unknown;
  logs: string;
  log_dropped: string;
  runner_lease: string | null;
  runner_pid: number | null;
  /** build arguments, plain (`--build-arg`) */
  build_args: Record<string, string>;
  /** build secrets (`--secret`), one sealed JSON document (src/builds/build-secrets.ts); never shown */
  build_secrets_sealed: string | null;
  /** what is shown of each build secret: its fingerprint */
  build_secrets_meta: Record<string, { fingerprint: string }>;
  created_at: Date;
  queued_at: Date | null;
  started_at: Date | null;
  finished_at: Date | null;
  updated_at: Date;
}

export interface EventRow {
  id: string;
  build_id: string;
  phase: string;
  level: string;
  message: string;
  detail: unknown;
  created_at: Date;
}

/** every column but the logs, for lists */
const SUMMARY = `id, owner_kind, owner_id, account_id, app_kind, app_id, app_slug, dockerfile, context_path, host_id, status,
  status_reason, phase, upload_token_hash, upload_expires_at, uploaded_at, source_bytes, image, digest, deployed_at,
  deploy_error, cancel_reason, cancel_phase, cancel_detail, '' AS logs, log_dropped, runner_lease, runner_pid,
  build_args, NULL AS build_secrets_sealed, build_secrets_meta, created_at, queued_at, started_at, finished_at, updated_at`;

export async function insertBuild(
  q: Queryable,
  b: Pick<
    BuildRow,
    | "id"
    | "owner_kind"
    | "owner_id"
    | "account_id"
    | "app_kind"
    | "app_id"
    | "app_slug"
    | "dockerfile"
    | "context_path"
    | "host_id"
    | "upload_token_hash"
    | "build_args"
    | "build_secrets_sealed"
    | "build_secrets_meta"
  >,
  ttlSeconds: number,
): Promise<BuildRow> {
  const { rows } = await q.query<BuildRow>(
    `INSERT INTO builds (id, owner_kind, owner_id, account_id, app_kind, app_id, app_slug, dockerfile, context_path,
       host_id, status, upload_token_hash, upload_expires_at, build_args, build_secrets_sealed, build_secrets_meta)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 'awaiting_upload', $11, now() + $12::int * interval '1 second',
       $13::jsonb, $14, $15::jsonb)
     RETURNING *`,
    [
      b.id,
      b.owner_kind,
      b.owner_id,
      b.account_id,
      b.app_kind,
      b.app_id,
      b.app_slug,
      b.dockerfile,
      b.context_path,
      b.host_id,
      b.upload_token_hash,
      ttlSeconds,
      JSON.stringify(b.build_args),
      b.build_secrets_sealed,
      JSON.stringify(b.build_secrets_meta),
    ],
  );
  return rows[0];
}

/** the sealed build secrets of a build (lists and reads leave them out) */
export async function buildSecretsOf(q: Queryable, id: string): Promise<string | null> {
  const { rows } = await q.query<{ s: string | null }>("SELECT build_secrets_sealed AS s FROM builds WHERE id = $1", [
    id,
  ]);
  return rows[0]?.s ?? null;
}

/** One build of the owner, with its logs. */
export const findBuild = finderOf<BuildRow>({ table: "builds", refColumn: null });

export async function buildById(q: Queryable, id: string): Promise<BuildRow | null> {
  if (!isUuid(id)) return null;
  return oneRow<BuildRow>(q, "SELECT * FROM builds WHERE id = $1", [id]);
}

/** The owner's newest builds (without logs); refs narrow them for instance-limited keys. */
export async function listBuilds(q: Queryable, owner: Owner, refs: string[] | null, limit: number) {
  return allRows<BuildRow>(
    q,
    `SELECT ${SUMMARY} FROM builds WHERE owner_kind = $1 AND owner_id = $2 AND ($3::text[] IS NULL OR id::text = ANY($3))
      ORDER BY created_at DESC, id LIMIT $4`,
    [owner.kind, owner.id, refs, limit],
  );
}

/**
 * Claims the upload of a build: the token must match, be unused and unexpired; it is cleared at once, so
 * the URL works a single time whatever the upload's outcome.
 */
export async function claimUpload(q: Queryable, id: string, tokenHash: Buffer): Promise<BuildRow | null> {
  return oneRow<BuildRow>(
    q,
    `UPDATE builds SET upload_token_hash = NULL, updated_at = now()
      WHERE id = $1 AND status = 'awaiting_upload' AND upload_token_hash = $2 AND upload_expires_at > now()
      RETURNING *`,
    [id, tokenHash],
  );
}

export async function markUploaded(q: Queryable, id: string, bytes: number): Promise<BuildRow | null> {
  return oneRow<BuildRow>(
    q,
    `UPDATE builds SET uploaded_at = now(), source_bytes = $2, updated_at = now()
      WHERE id = $1 AND status = 'awaiting_upload' RETURNING *`,
    [id, bytes],
  );
}

export async function markQueued(q: Queryable, id: string): Promise<BuildRow> {
  const { rows } = await q.query<BuildRow>(
    `UPDATE builds SET status = 'queued', queued_at = now(), updated_at = now() WHERE id = $1 RETURNING *`,
    [id],
  );
  return rows[0];
}

/** Ends a build that has not ended yet; null when it had (a cancel and the runner's own end race here). */
export async function finish(
  q: Queryable,
  id: string,
  status: "succeeded" | "failed" | "cancelled",
  fields: {
    reason?: string | null;
    image?: string | null;
    digest?: string | null;
    cancel?: { reason: string | null; phase: string | null; detail: unknown };
  } = {},
): Promise<BuildRow | null> {
  // the end and its event commit together (src/events/public.ts); a pool gets a transaction of its own
  if (!("release" in q)) return inTransaction(q, (tx) => finish(tx, id, status, fields));
  const { rows } = await q.query<BuildRow>(
    `UPDATE builds SET status = $2, status_reason = $3, image = coalesce($4, image), digest = coalesce($5, digest),
        cancel_reason = $6, cancel_phase = $7, cancel_detail = $8::jsonb,
        upload_token_hash = NULL, finished_at = now(), updated_at = now()
      WHERE id = $1 AND status IN ('awaiting_upload', 'queued', 'building') RETURNING *`,
    [
      id,
      status,
      fields.reason ?? null,
      fields.image ?? null,
      fields.digest ?? null,
      fields.cancel?.reason ?? null,
      fields.cancel?.phase ?? null,
      fields.cancel ? JSON.stringify(fields.cancel.detail ?? null) : null,
    ],
  );
  const b = rows[0];
  if (b && b.status !== "cancelled")
    await recordEvent(q, {
      type: b.status === "succeeded" ? "build.succeeded" : "build.failed",
      owner: { kind: b.owner_kind, id: b.owner_id },
      resource: { kind: "build", id: b.id },
      data: {
        status: b.status,
        reason: b.status_reason,
        image: b.image,
        digest: b.digest,
        app: b.app_id && { kind: b.app_kind, id: b.app_id },
      },
    });
  return b ?? null;
}

/**
 * The host's next queued build, marked `building` for this process, if the host runs fewer than `limit`
 * builds: counted under a per-host transaction lock, so processes sharing a host share its limit.
 */
export async function claimNext(q: Queryable, hostId: string, limit: number, lease: string): Promise<BuildRow | null> {
  await q.query("SELECT pg_advisory_xact_lock(hashtext('builds-host:' || $1))", [hostId]);
  const { rows: counted } = await q.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM builds WHERE host_id = $1 AND status = 'building'",
    [hostId],
  );
  if (counted[0].n >= limit) return null;
  return oneRow<BuildRow>(
    q,
    `UPDATE builds SET status = 'building', started_at = now(), updated_at = now(), runner_lease = $2, phase = 'starting'
      WHERE id = (SELECT id FROM builds WHERE host_id = $1 AND status = 'queued'
                   ORDER BY queued_at, id LIMIT 1 FOR UPDATE SKIP LOCKED)
      RETURNING *`,
    [hostId, lease],
  );
}

/**
 * Builds of the host left `building` by a process that is gone (its lease is free), marked failed; each is
 * returned with the builder pid it had, so the caller can kill a builder that outlived its platform.
 */
export async function failOrphans(q: Queryable, hostId: string, reason: string): Promise<BuildRow[]> {
  return allRows<BuildRow>(
    q,
    `UPDATE builds SET status = 'failed', status_reason = $2, finished_at = now(), updated_at = now()
      WHERE host_id = $1 AND status = 'building'
        AND (runner_lease IS NULL OR pg_try_advisory_xact_lock(hashtext('process:' || runner_lease::text)))
      RETURNING ${SUMMARY}`,
    [hostId, reason],
  );
}

/**
 * Builds of the host that will never start: not uploaded before their URL expired (with a grace for an upload
 * still arriving), or uploaded and not started within a day. Marked failed, so their sources are removed.
 */
export async function expireUploads(q: Queryable, hostId: string): Promise<string[]> {
  return returnedIds(
    q,
    `UPDATE builds SET status = 'failed', upload_token_hash = NULL, finished_at = now(), updated_at = now(),
        status_reason = CASE WHEN uploaded_at IS NULL THEN 'the source was not uploaded before the upload URL expired'
                             ELSE 'the build was not started within a day of its upload' END
      WHERE host_id = $1 AND status = 'awaiting_upload'
        AND ((uploaded_at IS NULL AND upload_expires_at < now() - interval '5 minutes')
             OR uploaded_at < now() - interval '1 day')
      RETURNING id`,
    [hostId],
  );
}

/** Statuses of the given builds (the runner's watch for cancels made through other processes). */
export async function statuses(q: Queryable, ids: string[]): Promise<Map<string, BuildStatus>> {
  if (!ids.length) return new Map();
  const { rows } = await q.query<{ id: string; status: BuildStatus }>(
    "SELECT id, status FROM builds WHERE id = ANY($1::uuid[])",
    [ids],
  );
  return new Map(rows.map((r) => [r.id, r.status]));
}

export async function setPhase(q: Queryable, id: string, phase: string, pid: number | null): Promise<void> {
  await q.query("UPDATE builds SET phase = $2, runner_pid = $3, updated_at = now() WHERE id = $1", [id, phase, pid]);
}

/** Appends builder output, keeping the last `max` characters and counting what was cut. */
export async function appendLog(q: Queryable, id: string, text: string, max: number): Promise<void> {
  await q.query(
    `UPDATE builds SET log_dropped = log_dropped + greatest(0, length(logs) + length($2) - $3),
        logs = right(logs || $2, $3) WHERE id = $1`,
    [id, text, max],
  );
}

export async function recordDeploy(q: Queryable, id: string, error: string | null): Promise<BuildRow | null> {
  return oneRow<BuildRow>(
    q,
    `UPDATE builds SET deployed_at = CASE WHEN $2::text IS NULL THEN now() END, deploy_error = $2, updated_at = now()
      WHERE id = $1 RETURNING *`,
    [id, error],
  );
}

/** Records a client-side step, keeping the newest `keep` events of the build. */
export async function insertEvent(
  q: Queryable,
  e: Pick<EventRow, "build_id" | "phase" | "level" | "message" | "detail">,
  keep: number,
): Promise<EventRow> {
  const { rows } = await q.query<EventRow>(
    `INSERT INTO build_events (build_id, phase, level, message, detail) VALUES ($1, $2, $3, $4, $5::jsonb) RETURNING *`,
    [e.build_id, e.phase, e.level, e.message, e.detail === undefined ? null : JSON.stringify(e.detail)],
  );
  await q.query(
    `DELETE FROM build_events WHERE build_id = $1 AND id <= (
       SELECT id FROM build_events WHERE build_id = $1 ORDER BY id DESC OFFSET $2 LIMIT 1)`,
    [e.build_id, keep],
  );
  return rows[0];
}

export async function eventsOf(q: Queryable, buildId: string): Promise<EventRow[]> {
  return allRows<EventRow>(q, "SELECT * FROM build_events WHERE build_id = $1 ORDER BY id", [buildId]);
}

/** Builds of the host whose working directories may be removed (not waiting for or running a build). */
export async function settledOnHost(q: Queryable, hostId: string, ids: string[]): Promise<string[]> {
  if (!ids.length) return [];
  return returnedIds(
    q,
    `SELECT x.id::text AS id FROM unnest($2::uuid[]) AS x(id)
      WHERE NOT EXISTS (SELECT 1 FROM builds b WHERE b.id = x.id AND b.host_id = $1 AND b.status IN ('awaiting_upload', 'queued', 'building'))`,
    [hostId, ids],
  );
}

/** Of the given builds, those that named the app (kept sources an app's newer build replaces; base-image refresh). */
export async function buildsOfApp(q: Queryable, appId: string, ids: string[]): Promise<string[]> {
  if (!ids.length) return [];
  const { rows } = await q.query<{ id: string }>(
    "SELECT id::text AS id FROM builds WHERE app_id = $1 AND id = ANY($2::uuid[])",
    [appId, ids],
  );
  return rows.map((r) => r.id);
}
