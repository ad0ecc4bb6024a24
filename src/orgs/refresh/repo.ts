import { allRows, isUuid, oneRow, type Queryable } from "../../store/db.js";
import type { BuildBaseImage } from "../../builds/contract.js";

/** Base-image refresh SQL (migration 033; README, "Base-image refresh"). */

export type RefreshStatus = "proposed" | "dismissed" | "rebuilding" | "done" | "failed";
export type Policy = "off" | "notify" | "auto";

export interface AppBuildRow {
  build_id: string;
  org_id: string;
  app_kind: "pod" | "group";
  app_id: string;
  app_slug: string;
  image: string | null;
  base_images: BuildBaseImage[];
  built_at: Date;
}

export interface RefreshRow {
  id: string;
  org_id: string;
  app_kind: "pod" | "group";
  app_id: string;
  app_slug: string;
  build_id: string;
  base_image: string;
  old_digest: string | null;
  new_digest: string;
  status: RefreshStatus;
  rebuild_build_id: string | null;
  error: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface Settings {
  policy: Policy;
  keep_days: number;
}

export async function settings(q: Queryable, orgId: string): Promise<Settings | null> {
  return oneRow<Settings>(
    q,
    "SELECT image_refresh_policy AS policy, image_refresh_keep_days AS keep_days FROM orgs WHERE id = $1",
    [orgId],
  );
}

/** Organizations the periodic check visits: policy notify or auto, with at least one recorded company app build. */
export async function orgsToCheck(q: Queryable): Promise<string[]> {
  const { rows } = await q.query<{ id: string }>(
    `SELECT o.id FROM orgs o WHERE o.image_refresh_policy <> 'off'
        AND EXISTS (SELECT 1 FROM org_app_builds b WHERE b.org_id = o.id) ORDER BY o.id`,
  );
  return rows.map((r) => r.id);
}

/** Records an app's newest build (older rows of the app go: the newest is where its image came from). */
export async function recordBuild(q: Queryable, b: Omit<AppBuildRow, "built_at">): Promise<boolean> {
  const { rowCount } = await q.query(
    `INSERT INTO org_app_builds (build_id, org_id, app_kind, app_id, app_slug, image, base_images)
     SELECT $1, $2, $3, $4, $5, $6, $7::jsonb WHERE EXISTS (SELECT 1 FROM orgs WHERE id = $2)
     ON CONFLICT (build_id) DO NOTHING`,
    [b.build_id, b.org_id, b.app_kind, b.app_id, b.app_slug, b.image, JSON.stringify(b.base_images)],
  );
  await q.query("DELETE FROM org_app_builds WHERE app_id = $1 AND build_id <> $2", [b.app_id, b.build_id]);
  return (rowCount ?? 0) > 0;
}

/** The newest recorded build of each of the organization's apps. */
export async function currentBuilds(q: Queryable, orgId: string): Promise<AppBuildRow[]> {
  return allRows<AppBuildRow>(
    q,
    `SELECT DISTINCT ON (app_id) * FROM org_app_builds WHERE org_id = $1 ORDER BY app_id, built_at DESC, build_id`,
    [orgId],
  );
}

export async function currentBuildOf(q: Queryable, orgId: string, appId: string): Promise<AppBuildRow | null> {
  return oneRow<AppBuildRow>(
    q,
    "SELECT * FROM org_app_builds WHERE org_id = $1 AND app_id = $2 ORDER BY built_at DESC, build_id LIMIT 1",
    [orgId, appId],
  );
}

/**
 * A new proposal unless this app, base and digest was proposed already (any status) or dismissed; open proposals of
 * the same app and base for an older digest are replaced by it. Null when nothing was created.
 */
export async function propose(
  q: Queryable,
  r: Pick<
    RefreshRow,
    "id" | "org_id" | "app_kind" | "app_id" | "app_slug" | "build_id" | "base_image" | "old_digest" | "new_digest"
  >,
): Promise<RefreshRow | null> {
  const { rows } = await q.query<RefreshRow>(
    `INSERT INTO org_image_refreshes (id, org_id, app_kind, app_id, app_slug, build_id, base_image, old_digest, new_digest)
     SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9
      WHERE NOT EXISTS (SELECT 1 FROM org_image_refresh_dismissals d
                         WHERE d.org_id = $2 AND d.app_id = $4 AND d.base_image = $7 AND d.digest = $9)
     ON CONFLICT (org_id, app_id, base_image, new_digest) DO NOTHING RETURNING *`,
    [r.id, r.org_id, r.app_kind, r.app_id, r.app_slug, r.build_id, r.base_image, r.old_digest, r.new_digest],
  );
  if (rows[0])
    await q.query(
      `DELETE FROM org_image_refreshes WHERE org_id = $1 AND app_id = $2 AND base_image = $3 AND status = 'proposed'
          AND new_digest <> $4`,
      [r.org_id, r.app_id, r.base_image, r.new_digest],
    );
  return rows[0] ?? null;
}

export async function list(q: Queryable, orgId: string): Promise<RefreshRow[]> {
  return allRows<RefreshRow>(q, "SELECT * FROM org_image_refreshes WHERE org_id = $1 ORDER BY created_at DESC, id", [
    orgId,
  ]);
}

export async function find(q: Queryable, orgId: string, id: string, forUpdate = false): Promise<RefreshRow | null> {
  if (!isUuid(id)) return null;
  return oneRow<RefreshRow>(
    q,
    `SELECT * FROM org_image_refreshes WHERE org_id = $1 AND id = $2 ${forUpdate ? "FOR UPDATE" : ""}`,
    [orgId, id],
  );
}

/** The app's open proposals (proposed), locked: what an automatic rebuild of the app takes on. */
export async function openOfApp(q: Queryable, orgId: string, appId: string): Promise<RefreshRow[]> {
  return allRows<RefreshRow>(
    q,
    `SELECT * FROM org_image_refreshes WHERE org_id = $1 AND app_id = $2 AND status = 'proposed' FOR UPDATE`,
    [orgId, appId],
  );
}

export async function setStatus(
  q: Queryable,
  ids: string[],
  status: RefreshStatus,
  fields: { rebuildBuildId?: string | null; error?: string | null } = {},
): Promise<void> {
  if (!ids.length) return;
  await q.query(
    `UPDATE org_image_refreshes SET status = $2, rebuild_build_id = coalesce($3, rebuild_build_id), error = $4,
        updated_at = now() WHERE id = ANY($1::uuid[])`,
    [ids, status, fields.rebuildBuildId ?? null, fields.error ?? null],
  );
}

export async function dismiss(q: Queryable, r: RefreshRow): Promise<void> {
  await setStatus(q, [r.id], "dismissed");
  await q.query(
    `INSERT INTO org_image_refresh_dismissals (org_id, app_id, base_image, digest) VALUES ($1, $2, $3, $4)
     ON CONFLICT DO NOTHING`,
    [r.org_id, r.app_id, r.base_image, r.new_digest],
  );
}

/** A rebuild ended: its proposals are done, or failed with the reason. */
export async function settleRebuild(q: Queryable, buildId: string, ok: boolean, error: string | null): Promise<void> {
  await q.query(
    `UPDATE org_image_refreshes SET status = $2, error = $3, updated_at = now()
      WHERE rebuild_build_id = $1 AND status = 'rebuilding'`,
    [buildId, ok ? "done" : "failed", ok ? null : error],
  );
}

/** A new build of the app already has a proposed version of a base: those proposals are done. */
export async function settleByBuild(q: Queryable, appId: string, bases: BuildBaseImage[]): Promise<void> {
  await q.query(
    `UPDATE org_image_refreshes r SET status = 'done', error = NULL, updated_at = now()
      WHERE r.app_id = $1 AND r.status IN ('proposed', 'failed', 'rebuilding')
        AND EXISTS (SELECT 1 FROM jsonb_array_elements($2::jsonb) b
                     WHERE b->>'image' = r.base_image AND b->>'digest' = r.new_digest)`,
    [appId, JSON.stringify(bases)],
  );
}

/** Proposals older than their organization's keep_days go (dismissals stay: the version is not proposed again). */
export async function prune(q: Queryable, orgId: string | null): Promise<number> {
  const { rowCount } = await q.query(
    `DELETE FROM org_image_refreshes r USING orgs o
      WHERE r.org_id = o.id AND ($1::uuid IS NULL OR o.id = $1)
        AND r.created_at < now() - o.image_refresh_keep_days * interval '1 day'`,
    [orgId],
  );
  return rowCount ?? 0;
}
