/** The static sites area's SQL for organizations (owned.ts): its owned table and the move of sites. */
import type { Queryable } from "../store/db.js";
import { moveOwned, notifyEach, type MoveTo, type OwnedTable } from "../kernel/owned-repo.js";

/** live: a finalized deployment is served; empty: none yet */
export const OWNED_SITES: OwnedTable = {
  kind: "site",
  table: "static_sites",
  columns: `id::text, name, slug, owner_kind, owner_id::text, account_id::text,
    CASE WHEN live_deployment_id IS NULL THEN 'empty' ELSE 'live' END AS state, created_at`,
  live: "removed_at IS NULL",
  refColumn: "slug",
};

/** Moves the sites and announces their slugs on `channel` (the edge caches each site with its owner). */
export async function moveSites(q: Queryable, ids: string[], to: MoveTo, channel: string): Promise<void> {
  const slugs = await moveOwned(q, OWNED_SITES, ids, to, { alsoSet: "updated_at = now()", returning: "slug" });
  await notifyEach(q, channel, slugs);
}
