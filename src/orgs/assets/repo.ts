/** The company-asset views' own SQL: who created what (the resources themselves are read through kernel.all("owned")). */
import type { Queryable } from "../../store/db.js";

export interface Creator {
  id: string;
  email: string | null;
  deleted: boolean;
}

/** The accounts by id with their e-mail; a deleted account is marked (its e-mail may belong to a new one). */
export async function creators(q: Queryable, ids: string[]): Promise<Map<string, Creator>> {
  if (!ids.length) return new Map();
  const { rows } = await q.query<{ id: string; email: string; deleted: boolean }>(
    "SELECT id::text, email, deleted_at IS NOT NULL AS deleted FROM accounts WHERE id = ANY($1::uuid[])",
    [[...new Set(ids)]],
  );
  return new Map(rows.map((r) => [r.id, { id: r.id, email: r.deleted ? null : r.email, deleted: r.deleted }]));
}

/** One designation or removal at a time per organization (two racing on one tied bundle wait for each other). */
export async function lockOrgAssets(q: Queryable, orgId: string): Promise<void> {
  await q.query("SELECT pg_advisory_xact_lock(hashtext('org-assets:' || $1))", [orgId]);
}
