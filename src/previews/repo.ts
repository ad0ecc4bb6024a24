import { allRows, oneRow, type Queryable, returnedRow } from "../store/db.js";
import type { Owner } from "../kernel/owner.js";
import { findByRef, listByRefs, type RefLookup } from "../store/find.js";

/** The sealed columns, the associated data of their ciphertexts. */
export const TOKEN_COLUMN = "preview_links.token_sealed";
export const ENV_COLUMN = "preview_links.env_sealed";

export interface LinkRow {
  id: string;
  owner_kind: Owner["kind"];
  owner_id: string;
  account_id: string;
  base_url: string;
  project: string;
  token_sealed: string;
  secret_hash: Buffer;
  app_name: string;
  dockerfile: string;
  port: number | null;
  size: string;
  env_sealed: string;
  database_id: string | null;
  idle_stop_seconds: number | null;
  max_age_seconds: number;
  created_at: Date;
  deleted_at: Date | null;
}

export type PreviewState = "building" | "deploying" | "running" | "failed" | "removing" | "removed";

export interface PreviewRow {
  id: string;
  link_id: string;
  mr_iid: number;
  desired: "open" | "closed";
  state: PreviewState;
  source_branch: string;
  sha: string;
  build_sha: string | null;
  build_id: string | null;
  deployed_sha: string | null;
  pod_id: string | null;
  db_branch_id: string | null;
  slug: string;
  note_posted_sha: string | null;
  error: string | null;
  created_at: Date;
  updated_at: Date;
  closed_at: Date | null;
}

export async function insertLink(q: Queryable, row: Omit<LinkRow, "created_at" | "deleted_at">): Promise<LinkRow> {
  return returnedRow<LinkRow>(
    q,
    `INSERT INTO preview_links (id, owner_kind, owner_id, account_id, base_url, project, token_sealed, secret_hash,
       app_name, dockerfile, port, size, env_sealed, database_id, idle_stop_seconds, max_age_seconds)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16) RETURNING *`,
    [
      ...[row.id, row.owner_kind, row.owner_id, row.account_id, row.base_url, row.project, row.token_sealed],
      ...[row.secret_hash, row.app_name, row.dockerfile, row.port, row.size, row.env_sealed, row.database_id],
      ...[row.idle_stop_seconds, row.max_age_seconds],
    ],
  );
}

/** preview_links as the shared lookups read it: live links (not unlinked), found by id only */
const LINKS: RefLookup = { table: "preview_links", refColumn: null, where: "deleted_at IS NULL" };

/** The owner's live links, newest first. */
export const listLinks = (q: Queryable, owner: Owner): Promise<LinkRow[]> =>
  listByRefs<LinkRow>(q, LINKS, owner, null, "created_at DESC, id");

export const findLink = (q: Queryable, owner: Owner, id: string): Promise<LinkRow | null> =>
  findByRef<LinkRow>(q, LINKS, owner, id);

/** A link by id whatever its owner (the webhook and the jobs); unlinked ones too. */
export async function linkById(q: Queryable, id: string): Promise<LinkRow | null> {
  return oneRow<LinkRow>(q, "SELECT * FROM preview_links WHERE id::text = $1", [id]);
}

/** Marks a link unlinked and every preview of it closed; returns the previews to remove. */
export async function unlink(q: Queryable, id: string): Promise<PreviewRow[]> {
  await q.query("UPDATE preview_links SET deleted_at = now() WHERE id = $1 AND deleted_at IS NULL", [id]);
  return allRows<PreviewRow>(
    q,
    `UPDATE previews SET desired = 'closed', closed_at = coalesce(closed_at, now()), updated_at = now(),
       state = CASE WHEN state = 'removed' THEN state ELSE 'removing' END
     WHERE link_id = $1 AND state <> 'removed' RETURNING *`,
    [id],
  );
}

/** Unlinked links whose previews are all removed: their rows go. */
export async function dropFinishedLinks(q: Queryable): Promise<number> {
  const { rowCount } = await q.query(
    `DELETE FROM preview_links l WHERE deleted_at IS NOT NULL
       AND NOT EXISTS (SELECT 1 FROM previews p WHERE p.link_id = l.id AND p.state <> 'removed')`,
  );
  return rowCount ?? 0;
}

/**
 * What a merge-request event wants, recorded: open (a new preview, or a reopened one) at a commit, or closed. A
 * closed or removed preview that opens again starts over (its pod and branch were removed).
 */
export async function recordIntent(
  q: Queryable,
  p: { id: string; linkId: string; iid: number; desired: "open" | "closed"; branch: string; sha: string; slug: string },
): Promise<PreviewRow | null> {
  if (p.desired === "closed") {
    return oneRow<PreviewRow>(
      q,
      `UPDATE previews SET desired = 'closed', closed_at = coalesce(closed_at, now()), updated_at = now(),
         state = CASE WHEN state = 'removed' THEN state ELSE 'removing' END
       WHERE link_id = $1 AND mr_iid = $2 RETURNING *`,
      [p.linkId, p.iid],
    );
  }
  return oneRow<PreviewRow>(
    q,
    `INSERT INTO previews (id, link_id, mr_iid, desired, state, source_branch, sha, slug)
     VALUES ($1, $2, $3, 'open', 'building', $4, $5, $6)
     ON CONFLICT (link_id, mr_iid) DO UPDATE SET desired = 'open', source_branch = EXCLUDED.source_branch,
       sha = EXCLUDED.sha, updated_at = now(), error = NULL, closed_at = NULL,
       created_at = CASE WHEN previews.state = 'removed' THEN now() ELSE previews.created_at END,
       state = CASE WHEN previews.state = 'running' AND previews.deployed_sha = EXCLUDED.sha THEN 'running'
                    ELSE 'building' END
     RETURNING *`,
    [p.id, p.linkId, p.iid, p.branch, p.sha, p.slug],
  );
}

/** The open previews of a link on a branch (push events). */
export async function openOnBranch(q: Queryable, linkId: string, branch: string): Promise<PreviewRow[]> {
  return allRows<PreviewRow>(
    q,
    "SELECT * FROM previews WHERE link_id = $1 AND source_branch = $2 AND desired = 'open'",
    [linkId, branch],
  );
}

export async function previewById(q: Queryable, id: string, opts: { forUpdate?: boolean } = {}) {
  return oneRow<PreviewRow>(q, `SELECT * FROM previews WHERE id::text = $1${opts.forUpdate ? " FOR UPDATE" : ""}`, [
    id,
  ]);
}

export interface PreviewWithLink extends PreviewRow {
  app_name: string;
  project: string;
}

/** The owner's previews with their link's app and project, newest first; removed ones of the last 30 days too. */
export async function listPreviews(q: Queryable, owner: Owner, id: string | null = null): Promise<PreviewWithLink[]> {
  return allRows<PreviewWithLink>(
    q,
    `SELECT p.*, l.app_name, l.project FROM previews p JOIN preview_links l ON l.id = p.link_id
     WHERE l.owner_kind = $1 AND l.owner_id = $2 AND ($3::text IS NULL OR p.id::text = $3)
       AND (p.state <> 'removed' OR p.updated_at > now() - interval '30 days')
     ORDER BY p.created_at DESC, p.id LIMIT 500`,
    [owner.kind, owner.id, id],
  );
}

/** Changes a preview's columns (the jobs' steps); `updated_at` moves. */
export async function setPreview(q: Queryable, id: string, patch: Partial<PreviewRow>): Promise<PreviewRow> {
  const keys = Object.keys(patch) as (keyof PreviewRow)[];
  const sets = keys.map((k, i) => `${k} = $${i + 2}`);
  return returnedRow<PreviewRow>(
    q,
    `UPDATE previews SET ${[...sets, "updated_at = now()"].join(", ")} WHERE id = $1 RETURNING *`,
    [id, ...keys.map((k) => patch[k])],
  );
}

/** Previews a job should look at again: unsettled for a while (a job lost to a crash), or open past their age. */
export async function needingWork(q: Queryable, staleSeconds: number): Promise<PreviewRow[]> {
  return allRows<PreviewRow>(
    q,
    `SELECT p.* FROM previews p JOIN preview_links l ON l.id = p.link_id
     WHERE (p.state IN ('building', 'deploying', 'removing') AND p.updated_at < now() - make_interval(secs => $1))
        OR (p.desired = 'open' AND p.created_at < now() - make_interval(secs => l.max_age_seconds))
     ORDER BY p.updated_at LIMIT 200`,
    [staleSeconds],
  );
}

/** Closes a preview past its link's maximum age (the sweep), unless it is already closed. */
export async function expire(q: Queryable, id: string): Promise<PreviewRow | null> {
  return oneRow<PreviewRow>(
    q,
    `UPDATE previews p SET desired = 'closed', state = 'removing', closed_at = now(), updated_at = now(),
       error = 'removed past the maximum age'
     FROM preview_links l WHERE p.id = $1 AND l.id = p.link_id AND p.desired = 'open'
       AND p.created_at < now() - make_interval(secs => l.max_age_seconds) RETURNING p.*`,
    [id],
  );
}
