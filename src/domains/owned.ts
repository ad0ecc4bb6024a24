import type { Queryable } from "../store/db.js";
import { isUuid } from "../store/db.js";
import type { OwnedResource, OwnedResources } from "../orgs/contract.js";
import type { Owner } from "../kernel/owner.js";

/**
 * Custom domains for organizations (contribution "owned"; src/orgs/README.md, "Company assets"). A domain is tied to
 * its app both ways: designating a pod, pod group or site moves its domains along, and designating a domain moves
 * its app. The edge serves a domain only while its app has the domain's owner, so the two must never part.
 * Owner columns are not watched by migration 019's triggers; a move announces the domains on domain_routes.
 */
interface Row {
  id: string;
  domain: string;
  app_kind: string;
  app_id: string;
  owner_kind: Owner["kind"];
  owner_id: string;
  account_id: string;
  status: string;
  created_at: Date;
}

const COLUMNS = "id::text, domain, app_kind, app_id, owner_kind, owner_id::text, account_id::text, status, created_at";
/** the edge's target kinds (custom_domains.app_kind) as asset kinds */
const ASSET_KIND: Record<string, string> = { pod: "pod", group: "pod-group", site: "site" };
const APP_KIND = Object.fromEntries(Object.entries(ASSET_KIND).map(([k, v]) => [v, k]));

const resource = (r: Row): OwnedResource => ({
  kind: "domain",
  id: r.id,
  name: r.domain,
  slug: null,
  owner: { kind: r.owner_kind, id: r.owner_id },
  accountId: r.account_id,
  state: r.status,
  createdAt: r.created_at,
});

export const domainsOwned = (): OwnedResources => ({
  kind: "domain",
  list: async (q: Queryable, owner: Owner) => {
    const { rows } = await q.query<Row>(
      `SELECT ${COLUMNS} FROM custom_domains WHERE owner_kind = $1 AND owner_id = $2 ORDER BY created_at, id`,
      [owner.kind, owner.id],
    );
    return rows.map(resource);
  },
  find: async (q: Queryable, ref: string) => {
    const byId = isUuid(ref);
    const { rows } = await q.query<Row>(
      `SELECT ${COLUMNS} FROM custom_domains WHERE ${byId ? "id = $1::uuid" : "domain = $1"}`,
      [byId ? ref : ref.toLowerCase().replace(/\.$/, "")],
    );
    return rows[0] ? resource(rows[0]) : null;
  },
  reassign: async (q: Queryable, ids: string[], to: { owner: Owner; accountId: string }) => {
    const { rows } = await q.query<{ domain: string }>(
      `UPDATE custom_domains SET owner_kind = $2, owner_id = $3, account_id = $4 WHERE id = ANY($1::uuid[]) RETURNING domain`,
      [ids, to.owner.kind, to.owner.id, to.accountId],
    );
    if (rows.length)
      await q.query("SELECT pg_notify('domain_routes', d) FROM unnest($1::text[]) AS d", [rows.map((r) => r.domain)]);
  },
  ties: async (q: Queryable, ref: { kind: string; id: string }) => {
    if (ref.kind === "domain") {
      const { rows } = await q.query<Row>(`SELECT ${COLUMNS} FROM custom_domains WHERE id = $1::uuid`, [ref.id]);
      const app = rows[0];
      return app && ASSET_KIND[app.app_kind] ? [{ kind: ASSET_KIND[app.app_kind], id: app.app_id }] : [];
    }
    const appKind = APP_KIND[ref.kind];
    if (!appKind) return [];
    const { rows } = await q.query<{ id: string }>(
      "SELECT id::text FROM custom_domains WHERE app_kind = $1 AND app_id = $2",
      [appKind, ref.id],
    );
    return rows.map((r) => ({ kind: "domain", id: r.id }));
  },
});
