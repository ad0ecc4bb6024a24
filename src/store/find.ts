/**
 * The one lookup every area's repo makes for a path ref: the owner's row of a table by id (a UUID) or by its
 * name column (a slug or name). Several rows may share a name (removed ones stay): `order` decides which comes.
 */
import { allRows, isUuid, oneRow, type Queryable } from "./db.js";

export interface RefLookup {
  table: string;
  /** the select list; every column by default */
  columns?: string;
  /** the column a ref that is not a UUID names; null: rows are found by id only */
  refColumn: string | null;
  /** the condition of the rows that count (e.g. live ones), if any */
  where?: string;
  /** ORDER BY of the rows a ref matches, the first one found; none where a ref matches one row at most */
  order?: string;
}

export async function findByRef<T extends object>(
  q: Queryable,
  t: RefLookup,
  owner: { kind: string; id: string },
  ref: string,
  opts: { forUpdate?: boolean; refValue?: (ref: string) => string } = {},
): Promise<T | null> {
  const byId = isUuid(ref);
  if (!byId && !t.refColumn) return null;
  return oneRow<T>(
    q,
    `SELECT ${t.columns ?? "*"} FROM ${t.table}
      WHERE owner_kind = $1 AND owner_id = $2 AND ${byId ? "id = $3::uuid" : `${t.refColumn} = $3`}${t.where ? ` AND ${t.where}` : ""}
      ${t.order ? `ORDER BY ${t.order} LIMIT 1` : ""} ${opts.forUpdate ? "FOR UPDATE" : ""}`,
    [owner.kind, owner.id, byId || !opts.refValue ? ref : opts.refValue(ref)],
  );
}

/**
 * The owner's rows of a table that count, in `order` (oldest first by default); `refs` (ids, or values of the ref
 * column) narrows them to what an instance-limited key may see, null lists them all.
 */
export async function listByRefs<T extends object>(
  q: Queryable,
  t: RefLookup,
  owner: { kind: string; id: string },
  refs: string[] | null,
  order = "created_at",
): Promise<T[]> {
  return allRows<T>(
    q,
    `SELECT ${t.columns ?? "*"} FROM ${t.table}
      WHERE owner_kind = $1 AND owner_id = $2${t.where ? ` AND ${t.where}` : ""}
        AND ($3::text[] IS NULL OR id::text = ANY($3)${t.refColumn ? ` OR ${t.refColumn} = ANY($3)` : ""})
      ORDER BY ${order}`,
    [owner.kind, owner.id, refs],
  );
}

/** How many of the owner's rows of a table count (a per-owner limit's check). */
export async function countByOwner(q: Queryable, t: RefLookup, owner: { kind: string; id: string }): Promise<number> {
  const { rows } = await q.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM ${t.table} WHERE owner_kind = $1 AND owner_id = $2${t.where ? ` AND ${t.where}` : ""}`,
    [owner.kind, owner.id],
  );
  return rows[0].n;
}

/** A repo's find over one table: `findByRef` bound to it (e.g. `export const findSite = finderOf<SiteRow>(SITES)`). */
export const finderOf =
  <T extends object>(t: RefLookup) =>
  (q: Queryable, owner: { kind: string; id: string }, ref: string, opts: { forUpdate?: boolean } = {}) =>
    findByRef<T>(q, t, owner, ref, opts);

/** A repo's list over one table: `listByRefs` bound to it and to an order (oldest first by default). */
export const listerOf =
  <T extends object>(t: RefLookup, order = "created_at") =>
  (q: Queryable, owner: { kind: string; id: string }, refs: string[] | null) =>
    listByRefs<T>(q, t, owner, refs, order);
