/** The domains area's SQL for organizations (owned.ts): its owned table, the move, and the ties to apps. */
import { oneRow, type Queryable } from "../store/db.js";
import { moveOwned, notifyEach, type MoveTo, type OwnedTable } from "../kernel/owned-repo.js";

export const OWNED_DOMAINS: OwnedTable = {
  kind: "domain",
  table: "custom_domains",
  columns:
    "id::text, domain AS name, NULL AS slug, owner_kind, owner_id::text, account_id::text, status AS state, created_at",
  live: "TRUE",
  refColumn: "domain",
  normalizeRef: (ref) => ref.toLowerCase().replace(/\.$/, ""),
};

/** Moves the domains and announces them on domain_routes (migration 019's triggers do not watch owner columns). */
export async function moveDomains(q: Queryable, ids: string[], to: MoveTo): Promise<void> {
  await notifyEach(q, "domain_routes", await moveOwned(q, OWNED_DOMAINS, ids, to, { returning: "domain" }));
}

/** The app a domain serves (custom_domains.app_kind, app_id). */
export async function domainApp(q: Queryable, id: string): Promise<{ app_kind: string; app_id: string } | null> {
  return oneRow<{ app_kind: string; app_id: string }>(
    q,
    "SELECT app_kind, app_id FROM custom_domains WHERE id = $1::uuid",
    [id],
  );
}

/** The ids of the domains serving an app. */
export async function domainsOfApp(q: Queryable, appKind: string, appId: string): Promise<string[]> {
  const { rows } = await q.query<{ id: string }>(
    "SELECT id::text FROM custom_domains WHERE app_kind = $1 AND app_id = $2",
    [appKind, appId],
  );
  return rows.map((r) => r.id);
}
