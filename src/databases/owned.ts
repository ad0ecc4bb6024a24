import type { Queryable } from "../store/db.js";
import { isUuid } from "../store/db.js";
import type { OwnedResource, OwnedResources } from "../orgs/contract.js";
import { ownerKey, type Owner } from "../kernel/owner.js";
import type { OwnerChangeFeed } from "../kernel/change-feed.js";

/**
 * Managed databases for organizations (contribution "owned"; src/orgs/README.md, "Company assets"). A move rewrites the
 * owner and responsible member of the instances and of their backups (the new owner sees and restores them). The
 * owner change feed hears it from migration 010's trigger at commit; this process's list cache drops both owners
 * at once. Slugs are unique platform-wide, so a move never collides. Servers are not touched; a non-empty
 * allowlist admits the new owner's app networks from the reconciler's next pass (driftedAllowlists).
 */
interface Row {
  id: string;
  name: string;
  slug: string;
  owner_kind: Owner["kind"];
  owner_id: string;
  account_id: string;
  state: string;
  created_at: Date;
}

const COLUMNS = "id::text, name, slug, owner_kind, owner_id::text, account_id::text, state, created_at";
/** what the API lists: a deleted instance is gone from the moment of the DELETE (repo.listDatabases) */
const LIVE = "state <> 'removed' AND desired_state <> 'removed' AND purged_at IS NULL";

const resource = (r: Row): OwnedResource => ({
  kind: "database",
  id: r.id,
  name: r.name,
  slug: r.slug,
  owner: { kind: r.owner_kind, id: r.owner_id },
  accountId: r.account_id,
  state: r.state,
  createdAt: r.created_at,
});

export function databasesOwned(changes: Pick<OwnerChangeFeed, "changed">): OwnedResources {
  return {
    kind: "database",
    list: async (q, owner) => {
      const { rows } = await q.query<Row>(
        `SELECT ${COLUMNS} FROM databases WHERE owner_kind = $1 AND owner_id = $2 AND ${LIVE} ORDER BY created_at, id`,
        [owner.kind, owner.id],
      );
      return rows.map(resource);
    },
    find: async (q, ref) => {
      const { rows } = await q.query<Row>(
        `SELECT ${COLUMNS} FROM databases WHERE ${isUuid(ref) ? "id = $1::uuid" : "slug = $1"} AND ${LIVE}`,
        [ref],
      );
      return rows[0] ? resource(rows[0]) : null;
    },
    reassign: async (q: Queryable, ids, to) => {
      const { rows } = await q.query<{ owner_kind: Owner["kind"]; owner_id: string }>(
        `WITH old AS (SELECT id, owner_kind, owner_id FROM databases
                       WHERE id = ANY($1::uuid[]) AND purged_at IS NULL FOR UPDATE)
         UPDATE databases d SET owner_kind = $2, owner_id = $3, account_id = $4 FROM old
          WHERE d.id = old.id RETURNING old.owner_kind, old.owner_id::text`,
        [ids, to.owner.kind, to.owner.id, to.accountId],
      );
      await q.query(
        "UPDATE database_backups SET owner_kind = $2, owner_id = $3, account_id = $4 WHERE database_id = ANY($1::uuid[])",
        [ids, to.owner.kind, to.owner.id, to.accountId],
      );
      // the trigger's NOTIFY comes at commit; until then this process's cached lists are dropped now
      const keys = new Set([ownerKey(to.owner), ...rows.map((r) => ownerKey({ kind: r.owner_kind, id: r.owner_id }))]);
      for (const key of keys) changes.changed(key);
    },
  };
}
