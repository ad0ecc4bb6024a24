/**
 * The SQL of the usual metering source (kernel/metered.ts `tableMetering`): the billable rows of one table, a page
 * of billing's walk or one owner's now.
 */
import { allRows, type Queryable } from "../store/db.js";
import type { Owner } from "./owner.js";
import type { MeteringPage } from "./contracts.js";

/** A table billing meters: which of its rows hold capacity now, and what is read of them. */
export interface MeteredTable {
  table: string;
  /** the select list: the owner columns (id, owner_kind, owner_id, account_id) and what prices a row */
  columns: string;
  /** the condition of a billable row */
  billable: string;
}

/** Billable rows created before `createdBefore`, after `after` in (owner key, id) order, at most `limit`. */
export async function billablePage<R extends object>(q: Queryable, t: MeteredTable, page: MeteringPage): Promise<R[]> {
  return allRows<R>(
    q,
    `SELECT ${t.columns} FROM ${t.table}
      WHERE ${t.billable} AND created_at < $1
        AND ($2::text IS NULL OR (owner_kind || ':' || owner_id::text, id::text) > ($2, $3))
      ORDER BY owner_kind || ':' || owner_id::text, id::text LIMIT $4`,
    [page.createdBefore, page.after?.[0] ?? null, page.after?.[1] ?? null, page.limit],
  );
}

/** One owner's billable rows now (the burn rate). */
export async function billableOfOwner<R extends object>(q: Queryable, t: MeteredTable, owner: Owner): Promise<R[]> {
  return allRows<R>(
    q,
    `SELECT ${t.columns} FROM ${t.table} WHERE ${t.billable} AND owner_kind = $1 AND owner_id = $2`,
    [owner.kind, owner.id],
  );
}
