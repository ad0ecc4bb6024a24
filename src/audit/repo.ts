import type { Queryable } from "../store/db.js";
import type { Owner } from "../kernel/owner.js";

export interface AuditRow {
  id: string;
  account_id: string;
  token_id: string | null;
  token_kind: string | null;
  action: string;
  target: string | null;
  ip: string | null;
  status: number;
  request_id: string | null;
  created_at: Date;
}

export async function insertAudit(
  q: Queryable,
  r: {
    accountId: string;
    owner: Owner;
    tokenId: string;
    tokenKind: string;
    action: string;
    resourceKind: string | null;
    target: string | null;
    ip: string;
    status: number;
    requestId: string;
  },
): Promise<void> {
  await q.query(
    `INSERT INTO audit_log (account_id, owner_kind, owner_id, token_id, token_kind, action, resource_kind, target, ip, status, request_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
    [
      r.accountId,
      r.owner.kind,
      r.owner.id,
      r.tokenId,
      r.tokenKind,
      r.action,
      r.resourceKind,
      r.target,
      r.ip,
      r.status,
      r.requestId,
    ],
  );
}

/**
 * Rows an account made, newest first, below the cursor id (keyset paging). ORDER BY names the table's
 * column: a bare `id` would be the text output column, and "9" sorts after "10".
 */
export async function listByActor(
  q: Queryable,
  accountId: string,
  page: { before: string | null; limit: number },
): Promise<AuditRow[]> {
  const { rows } = await q.query<AuditRow>(
    `SELECT id::text, account_id, token_id, token_kind, action, target, ip, status, request_id, created_at
       FROM audit_log WHERE account_id = $1 AND ($2::bigint IS NULL OR id < $2::bigint)
      ORDER BY audit_log.id DESC LIMIT $3`,
    [accountId, page.before, page.limit],
  );
  return rows;
}

export interface OwnerAuditRow extends AuditRow {
  email: string;
  resource_kind: string | null;
}

/** Filters of an owner's audit log; every one optional. `accountIds`: the actor (an e-mail can name several). */
export interface OwnerAuditFilter {
  accountIds?: string[];
  action?: string;
  resourceKind?: string;
  from?: Date;
  to?: Date;
}

/**
 * Audit rows are written with created_at = clock_timestamp() and their id from the sequence at the same moment
 * (migration 025), so id order follows created_at order up to clock steps; this allowance covers those.
 */
const CLOCK_SLACK = "1 hour";

/**
 * An owner's audit rows, newest first, below the cursor id (keyset on id), with the filters that are set. Only the
 * set filters enter the SQL, so the planner picks the index made for them (migration 024: by actor, by action, by
 * resource kind, each ending in id DESC). A from/to range also becomes id bounds, found in O(log n) through the
 * created_at index (migration 025): any row written an hour or more after `to` has a larger id than every row
 * before `to`, and any row written an hour or more before `from` a smaller id than every row from `from` on; so the
 * id scan starts and stops near the range, wherever it lies in the log, and created_at still decides exactly.
 */
export function ownerAuditQuery(
  owner: Owner,
  f: OwnerAuditFilter,
  page: { before: string | null; limit: number },
): { text: string; values: unknown[] } {
  const values: unknown[] = [owner.kind, owner.id];
  const arg = (v: unknown) => `$${values.push(v)}`;
  const where = ["l.owner_kind = $1", "l.owner_id = $2"];
  if (f.accountIds)
    where.push(
      f.accountIds.length === 1
        ? `l.account_id = ${arg(f.accountIds[0])}`
        : `l.account_id = ANY(${arg(f.accountIds)}::uuid[])`,
    );
  if (f.action !== undefined) where.push(`l.action = ${arg(f.action)}`);
  if (f.resourceKind !== undefined) where.push(`l.resource_kind = ${arg(f.resourceKind)}`);
  const bound = (op: "<" | ">", created: string, order: "ASC" | "DESC") =>
    `l.id ${op} coalesce((SELECT b.id FROM audit_log b WHERE b.owner_kind = $1 AND b.owner_id = $2 AND b.created_at ${created}
        ORDER BY b.created_at ${order} LIMIT 1), ${op === "<" ? "'9223372036854775807'" : "0"}::bigint)`;
  if (f.from) {
    const from = arg(f.from);
    where.push(`l.created_at >= ${from}`, bound(">", `< ${from}::timestamptz - interval '${CLOCK_SLACK}'`, "DESC"));
  }
  if (f.to) {
    const to = arg(f.to);
    where.push(`l.created_at < ${to}`, bound("<", `>= ${to}::timestamptz + interval '${CLOCK_SLACK}'`, "ASC"));
  }
  if (page.before !== null) where.push(`l.id < ${arg(page.before)}::bigint`);
  return {
    text: `SELECT l.id::text, l.account_id, a.email, l.token_id, l.token_kind, l.action, l.resource_kind, l.target, l.ip,
                  l.status, l.request_id, l.created_at
             FROM audit_log l JOIN accounts a ON a.id = l.account_id
            WHERE ${where.join(" AND ")}
            ORDER BY l.id DESC LIMIT ${arg(page.limit)}`,
    values,
  };
}

export async function listByOwner(
  q: Queryable,
  owner: Owner,
  f: OwnerAuditFilter,
  page: { before: string | null; limit: number },
): Promise<OwnerAuditRow[]> {
  const { rows } = await q.query<OwnerAuditRow>(ownerAuditQuery(owner, f, page));
  return rows;
}

/** The accounts an actor filter names: an account id as given, an e-mail every account that ever had it. */
export async function actorIds(q: Queryable, actor: string): Promise<string[]> {
  if (/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(actor)) return [actor.toLowerCase()];
  const { rows } = await q.query<{ id: string }>("SELECT id FROM accounts WHERE email = $1", [
    actor.trim().toLowerCase(),
  ]);
  return rows.map((r) => r.id);
}
