import type { Queryable } from "../store/db.js";
import { isUuid } from "../store/db.js";
import type { OwnedResource, OwnedResources } from "../orgs/contract.js";
import type { Owner } from "../kernel/owner.js";
import { STATIC_CHANNEL } from "./service.js";

/**
 * Static sites for organizations (contribution "owned"; src/orgs/README.md, "Company assets"). A move rewrites the
 * site's owner and responsible member; its deployments follow through site_id (their account_id stays: who
 * deployed). The edge caches each site with its owner, so a move announces the slug on static_routes (migration
 * 018's trigger does not fire on owner columns).
 */
interface Row {
  id: string;
  name: string;
  slug: string;
  owner_kind: Owner["kind"];
  owner_id: string;
  account_id: string;
  live_deployment_id: string | null;
  created_at: Date;
}

const COLUMNS = "id::text, name, slug, owner_kind, owner_id::text, account_id::text, live_deployment_id, created_at";

/** live: a finalized deployment is served; empty: none yet */
const resource = (r: Row): OwnedResource => ({
  kind: "site",
  id: r.id,
  name: r.name,
  slug: r.slug,
  owner: { kind: r.owner_kind, id: r.owner_id },
  accountId: r.account_id,
  state: r.live_deployment_id ? "live" : "empty",
  createdAt: r.created_at,
});

async function list(q: Queryable, owner: Owner): Promise<OwnedResource[]> {
  const { rows } = await q.query<Row>(
    `SELECT ${COLUMNS} FROM static_sites WHERE owner_kind = $1 AND owner_id = $2 AND removed_at IS NULL
      ORDER BY created_at, id`,
    [owner.kind, owner.id],
  );
  return rows.map(resource);
}

async function find(q: Queryable, ref: string): Promise<OwnedResource | null> {
  const { rows } = await q.query<Row>(
    `SELECT ${COLUMNS} FROM static_sites WHERE ${isUuid(ref) ? "id = $1::uuid" : "slug = $1"} AND removed_at IS NULL`,
    [ref],
  );
  return rows[0] ? resource(rows[0]) : null;
}

async function reassign(q: Queryable, ids: string[], to: { owner: Owner; accountId: string }): Promise<void> {
  const { rows } = await q.query<{ slug: string }>(
    `UPDATE static_sites SET owner_kind = $2, owner_id = $3, account_id = $4, updated_at = now()
      WHERE id = ANY($1::uuid[]) AND removed_at IS NULL RETURNING slug`,
    [ids, to.owner.kind, to.owner.id, to.accountId],
  );
  if (rows.length)
    await q.query("SELECT pg_notify($1, s) FROM unnest($2::text[]) AS s", [STATIC_CHANNEL, rows.map((r) => r.slug)]);
}

export const staticOwned = (): OwnedResources => ({ kind: "site", list, find, reassign });
