/**
 * The SQL every area's owned resources share (kernel.addOwned; src/orgs/README.md, "Company assets"): an owner's
 * live rows of one table, one row by id or by its platform-wide unique name, and the owner columns a move rewrites.
 * Each area describes its table once (in its repo) with a select list that yields an `OwnedRow`.
 */
import { type Queryable, isUuid } from "../store/db.js";
import type { Owner } from "./owner.js";
import type { OwnedResource, OwnedResources } from "./contracts.js";

/** The columns every owned row starts with: its id, who owns it, the member responsible. */
export interface OwnerColumns {
  id: string;
  owner_kind: Owner["kind"];
  owner_id: string;
  account_id: string;
}

/** An owned row with a name and the slug it is served or found by. */
export interface NamedOwnerColumns extends OwnerColumns {
  name: string;
  slug: string;
}

/** What an owned table's select list yields, whatever its own columns are called. */
export interface OwnedRow {
  id: string;
  name: string;
  slug: string | null;
  owner_kind: Owner["kind"];
  owner_id: string;
  account_id: string;
  state: string;
  created_at: Date;
}

export interface OwnedTable {
  kind: string;
  table: string;
  /** the select list: id::text, name, slug, owner_kind, owner_id::text, account_id::text, state, created_at */
  columns: string;
  /** the condition of a live row (deleted ones are neither listed nor found) */
  live: string;
  /** the column a ref that is not a UUID names; null: found by id only */
  refColumn: string | null;
  /** how a name ref is written in the table (e.g. lower case) */
  normalizeRef?: (ref: string) => string;
}

export interface MoveTo {
  owner: Owner;
  accountId: string;
}

export const ownedResource = (kind: string, r: OwnedRow): OwnedResource => ({
  kind,
  id: r.id,
  name: r.name,
  slug: r.slug,
  owner: { kind: r.owner_kind, id: r.owner_id },
  accountId: r.account_id,
  state: r.state,
  createdAt: r.created_at,
});

export async function listOwned(q: Queryable, t: OwnedTable, owner: Owner): Promise<OwnedResource[]> {
  const { rows } = await q.query<OwnedRow>(
    `SELECT ${t.columns} FROM ${t.table} WHERE owner_kind = $1 AND owner_id = $2 AND ${t.live} ORDER BY created_at, id`,
    [owner.kind, owner.id],
  );
  return rows.map((r) => ownedResource(t.kind, r));
}

export async function findOwned(q: Queryable, t: OwnedTable, ref: string): Promise<OwnedResource | null> {
  const byId = isUuid(ref);
  if (!byId && !t.refColumn) return null;
  const { rows } = await q.query<OwnedRow>(
    `SELECT ${t.columns} FROM ${t.table} WHERE ${byId ? "id = $1::uuid" : `${t.refColumn} = $1`} AND ${t.live}`,
    [byId || !t.normalizeRef ? ref : t.normalizeRef(ref)],
  );
  return rows[0] ? ownedResource(t.kind, rows[0]) : null;
}

/**
 * Rewrites the owner columns of the live rows among `ids` (plus `alsoSet`, e.g. "updated_at = now()") and returns
 * the `returning` column of each row moved.
 */
export async function moveOwned(
  q: Queryable,
  t: Pick<OwnedTable, "table" | "live">,
  ids: string[],
  to: MoveTo,
  opts: { alsoSet?: string; returning?: string } = {},
): Promise<string[]> {
  const { rows } = await q.query<{ r: string }>(
    `UPDATE ${t.table} SET owner_kind = $2, owner_id = $3, account_id = $4${opts.alsoSet ? `, ${opts.alsoSet}` : ""}
      WHERE id = ANY($1::uuid[]) AND ${t.live} RETURNING ${opts.returning ?? "id::text"} AS r`,
    [ids, to.owner.kind, to.owner.id, to.accountId],
  );
  return rows.map((r) => r.r);
}

/** One NOTIFY per payload on `channel` (the edge caches what it serves with its owner: a move announces it). */
export async function notifyEach(q: Queryable, channel: string, payloads: string[]): Promise<void> {
  if (payloads.length) await q.query("SELECT pg_notify($1, p) FROM unnest($2::text[]) AS p", [channel, payloads]);
}

/** An area's OwnedResources over one table: list and find from it, the move and ties the area's own. */
export const ownedSource = (
  t: OwnedTable,
  reassign: OwnedResources["reassign"],
  ties?: OwnedResources["ties"],
): OwnedResources => ({
  kind: t.kind,
  list: (q, owner) => listOwned(q, t, owner),
  find: (q, ref) => findOwned(q, t, ref),
  reassign,
  ...(ties ? { ties } : {}),
});
