import { allRows, allValues, isUuid, oneRow, oneValue, returnedIds, returnedRow, type Queryable } from "../store/db.js";
import type { Owner } from "../kernel/owner.js";
import type { StaticFileEntry } from "./contract.js";
import { finderOf, listerOf } from "../store/find.js";

import type { NamedOwnerColumns } from "../kernel/owned-repo.js";

/** the owner's live sites, found by id or slug */
const SITES = { table: "static_sites", refColumn: "slug", where: "removed_at IS NULL" };

export interface SiteRow extends NamedOwnerColumns {
  spa: boolean;
  not_found_page: string | null;
  live_deployment_id: string | null;
  created_at: Date;
  updated_at: Date;
  removed_at: Date | null;
}

export interface DeploymentRow {
  id: string;
  site_id: string;
  account_id: string;
  status: "awaiting_upload" | "uploaded" | "finalized";
  file_count: number;
  bytes: number;
  created_at: Date;
  uploaded_at: Date | null;
  finalized_at: Date | null;
}

/** One file of an upload, ready to be recorded: its path in the deployment and its content's hash. */
export interface FileRecord {
  path: string;
  hash: string;
  size: number;
  contentType: string;
}

/** The owner's live site named by ref (id or slug). */
export const findSite = finderOf<SiteRow>(SITES);

/** The owner's live sites, oldest first; `refs` (ids or slugs) narrows them for instance-limited keys. */
export const listSites = listerOf<SiteRow>(SITES, "created_at, id");

/** Whether a live site has the slug (the edge's route source, and other areas' slug claims, ask this). */
export async function liveSiteBySlug(q: Queryable, slug: string): Promise<SiteRow | null> {
  return oneRow<SiteRow>(q, "SELECT * FROM static_sites WHERE slug = $1 AND removed_at IS NULL", [slug]);
}

export async function insertSite(
  q: Queryable,
  row: Pick<SiteRow, "id" | "owner_kind" | "owner_id" | "account_id" | "name" | "slug" | "spa" | "not_found_page">,
): Promise<SiteRow> {
  return returnedRow<SiteRow>(
    q,
    `INSERT INTO static_sites (id, owner_kind, owner_id, account_id, name, slug, spa, not_found_page)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING *`,
    [row.id, row.owner_kind, row.owner_id, row.account_id, row.name, row.slug, row.spa, row.not_found_page],
  );
}

export async function updateSite(
  q: Queryable,
  id: string,
  patch: { name?: string; spa?: boolean; not_found_page?: string | null },
): Promise<SiteRow> {
  return returnedRow<SiteRow>(
    q,
    `UPDATE static_sites SET
       name = COALESCE($2, name),
       spa = COALESCE($3, spa),
       not_found_page = CASE WHEN $4 THEN $5 ELSE not_found_page END,
       updated_at = now()
     WHERE id = $1 RETURNING *`,
    [id, patch.name ?? null, patch.spa ?? null, patch.not_found_page !== undefined, patch.not_found_page ?? null],
  );
}

export async function removeSite(q: Queryable, id: string): Promise<void> {
  await q.query("UPDATE static_sites SET removed_at = now(), updated_at = now() WHERE id = $1", [id]);
}

/** Makes a deployment the site's live one: the one UPDATE the edge follows (NOTIFY static_routes). */
export async function setLive(q: Queryable, siteId: string, deploymentId: string): Promise<SiteRow> {
  return returnedRow<SiteRow>(
    q,
    "UPDATE static_sites SET live_deployment_id = $2, updated_at = now() WHERE id = $1 RETURNING *",
    [siteId, deploymentId],
  );
}

export async function insertDeployment(q: Queryable, d: { id: string; siteId: string; accountId: string }) {
  return returnedRow<DeploymentRow>(
    q,
    `INSERT INTO static_deployments (id, site_id, account_id, status) VALUES ($1, $2, $3, 'awaiting_upload') RETURNING *`,
    [d.id, d.siteId, d.accountId],
  );
}

/** A deployment of the site (never another site's, whatever the id says). */
export async function findDeployment(
  q: Queryable,
  siteId: string,
  id: string,
  opts: { forUpdate?: boolean } = {},
): Promise<DeploymentRow | null> {
  if (!isUuid(id)) return null;
  return oneRow<DeploymentRow>(
    q,
    `SELECT * FROM static_deployments WHERE id = $1 AND site_id = $2 ${opts.forUpdate ? "FOR UPDATE" : ""}`,
    [id, siteId],
  );
}

/** The owner's live site holding a deployment, by the deployment's id alone. */
export async function siteOfDeployment(q: Queryable, owner: Owner, deploymentId: string): Promise<SiteRow | null> {
  if (!isUuid(deploymentId)) return null;
  return oneRow<SiteRow>(
    q,
    `SELECT s.* FROM static_deployments d JOIN static_sites s ON s.id = d.site_id
      WHERE d.id = $1 AND s.owner_kind = $2 AND s.owner_id = $3 AND s.removed_at IS NULL`,
    [deploymentId, owner.kind, owner.id],
  );
}

/** The site's deployments, newest first. */
export async function listDeployments(q: Queryable, siteId: string, limit: number): Promise<DeploymentRow[]> {
  return allRows<DeploymentRow>(
    q,
    "SELECT * FROM static_deployments WHERE site_id = $1 ORDER BY created_at DESC, id LIMIT $2",
    [siteId, limit],
  );
}

export async function markFinalized(q: Queryable, id: string): Promise<DeploymentRow> {
  return returnedRow<DeploymentRow>(
    q,
    "UPDATE static_deployments SET status = 'finalized', finalized_at = now() WHERE id = $1 RETURNING *",
    [id],
  );
}

/**
 * Records an upload's blobs: existing ones are touched (their row locked to commit, so the sweep cannot delete
 * them meanwhile); returns the hashes not stored yet, which the caller inserts with `insertBlob`.
 */
export async function touchBlobs(q: Queryable, hashes: string[]): Promise<Set<string>> {
  const have = new Set(
    await allValues<string>(
      q,
      "hash",
      "UPDATE static_blobs SET touched_at = now() WHERE hash = ANY($1) RETURNING hash",
      [hashes],
    ),
  );
  return new Set(hashes.filter((h) => !have.has(h)));
}

export async function insertBlob(q: Queryable, hash: string, content: Buffer): Promise<void> {
  await q.query(
    `INSERT INTO static_blobs (hash, size, content) VALUES ($1, $2, $3)
     ON CONFLICT (hash) DO UPDATE SET touched_at = now()`,
    [hash, content.length, content],
  );
}

/** The files of an upload and its totals, in the upload's transaction. */
export async function recordFiles(q: Queryable, deploymentId: string, files: FileRecord[]): Promise<DeploymentRow> {
  for (let i = 0; i < files.length; i += 1000) {
    const batch = files.slice(i, i + 1000);
    await q.query(
      `INSERT INTO static_files (deployment_id, path, hash, size, content_type)
       SELECT $1, * FROM unnest($2::text[], $3::text[], $4::bigint[], $5::text[])`,
      [
        deploymentId,
        batch.map((f) => f.path),
        batch.map((f) => f.hash),
        batch.map((f) => f.size),
        batch.map((f) => f.contentType),
      ],
    );
  }
  return returnedRow<DeploymentRow>(
    q,
    `UPDATE static_deployments SET status = 'uploaded', uploaded_at = now(), file_count = $2, bytes = $3
      WHERE id = $1 RETURNING *`,
    [deploymentId, files.length, files.reduce((n, f) => n + f.size, 0)],
  );
}

/** The edge's view of a deployment: every file by path. */
export async function manifest(q: Queryable, deploymentId: string): Promise<Map<string, StaticFileEntry>> {
  const out = new Map<string, StaticFileEntry>();
  if (!isUuid(deploymentId)) return out;
  const { rows } = await q.query<{ path: string; hash: string; size: number; content_type: string }>(
    "SELECT path, hash, size, content_type FROM static_files WHERE deployment_id = $1",
    [deploymentId],
  );
  for (const r of rows) out.set(r.path, { hash: r.hash, size: r.size, contentType: r.content_type });
  return out;
}

export async function blob(q: Queryable, hash: string): Promise<Buffer | null> {
  return oneValue<Buffer>(q, "content", "SELECT content FROM static_blobs WHERE hash = $1", [hash]);
}

/**
 * Deployments the sweep deletes: those of deleted sites; finalized ones older than the newest `keep` of their
 * site (never the live one); never-uploaded ones after `abandonedHours`, uploaded never-finalized after 7 times that.
 */
export async function prunableDeployments(
  q: Queryable,
  o: { keep: number; abandonedHours: number; limit: number },
): Promise<string[]> {
  return returnedIds(
    q,
    `WITH ranked AS (
       SELECT d.id, d.status, d.created_at, d.uploaded_at, s.removed_at, s.live_deployment_id,
              row_number() OVER (PARTITION BY d.site_id, d.status ORDER BY d.finalized_at DESC, d.id DESC) AS newer
         FROM static_deployments d JOIN static_sites s ON s.id = d.site_id)
     SELECT id FROM ranked
      WHERE id IS DISTINCT FROM live_deployment_id
        AND (removed_at IS NOT NULL
          OR (status = 'finalized' AND newer > $1)
          OR (status = 'awaiting_upload' AND created_at < now() - $2 * interval '1 hour')
          OR (status = 'uploaded' AND uploaded_at < now() - 7 * $2 * interval '1 hour'))
      LIMIT $3`,
    [o.keep, o.abandonedHours, o.limit],
  );
}

/** Deleted sites let go of their live deployment, so the sweep can delete it. */
export async function releaseRemovedSites(q: Queryable): Promise<void> {
  await q.query(
    "UPDATE static_sites SET live_deployment_id = NULL WHERE removed_at IS NOT NULL AND live_deployment_id IS NOT NULL",
  );
}

/** A deployment and its manifest (never a live one: the site's reference forbids it). */
export async function deleteDeployment(q: Queryable, id: string): Promise<void> {
  await q.query("DELETE FROM static_deployments WHERE id = $1", [id]);
}

/** Contents no deployment names and no upload touched within the grace period. */
export async function deleteUnusedBlobs(q: Queryable, graceMinutes: number, limit: number): Promise<number> {
  const { rowCount } = await q.query(
    `DELETE FROM static_blobs b
      WHERE b.hash IN (SELECT x.hash FROM static_blobs x
                        WHERE x.touched_at < now() - $1 * interval '1 minute'
                          AND NOT EXISTS (SELECT 1 FROM static_files f WHERE f.hash = x.hash)
                        LIMIT $2)
        AND b.touched_at < now() - $1 * interval '1 minute'`,
    [graceMinutes, limit],
  );
  return rowCount ?? 0;
}
