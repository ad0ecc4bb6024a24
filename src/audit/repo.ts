import { allRows, allValues, inTransaction, returnedRow, type Db, type Queryable } from "../store/db.js";
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
  return allRows<AuditRow>(
    q,
    `SELECT id::text, account_id, token_id, token_kind, action, target, ip, status, request_id, created_at
       FROM audit_log WHERE account_id = $1 AND ($2::bigint IS NULL OR id < $2::bigint)
      ORDER BY audit_log.id DESC LIMIT $3`,
    [accountId, page.before, page.limit],
  );
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

/** Ids every row of a from/to range lies strictly between (null: no bound on that side). */
export interface IdBounds {
  after: string | null;
  before: string | null;
}

/**
 * The id bounds of a from/to range, in O(log n) through the created_at index (migration 025): any row written an
 * hour or more after `to` has a larger id than every row before `to`, and any row written an hour or more before
 * `from` a smaller id than every row from `from` on. Found first and passed as values, so the planner sees how many
 * rows lie between them (a subquery's result it would have to guess).
 */
export async function idBounds(q: Queryable, owner: Owner, range: { from?: Date; to?: Date }): Promise<IdBounds> {
  if (!range.from && !range.to) return { after: null, before: null };
  return returnedRow<IdBounds>(
    q,
    `SELECT (SELECT id::text FROM audit_log WHERE owner_kind = $1 AND owner_id = $2
                AND created_at < $3::timestamptz - interval '${CLOCK_SLACK}' ORDER BY created_at DESC LIMIT 1) AS after,
            (SELECT id::text FROM audit_log WHERE owner_kind = $1 AND owner_id = $2
                AND created_at >= $4::timestamptz + interval '${CLOCK_SLACK}' ORDER BY created_at LIMIT 1) AS before`,
    [owner.kind, owner.id, range.from ?? null, range.to ?? null],
  );
}

/**
 * An owner's audit rows, newest first, below the cursor id (keyset on id), with the filters that are set. Only the
 * set filters enter the SQL, so the planner picks the index made for them (migration 024: by actor, by action, by
 * resource kind, each ending in id DESC). A from/to range bounds the ids (`idBounds`), so the id scan starts and
 * stops near the range wherever it lies in the log, and created_at then decides exactly. That check sits outside
 * the id-ordered subquery (OFFSET 0 keeps it there): inside, the planner would count the range twice (created_at
 * and the id bounds say the same thing), expect almost no rows and sort a bitmap scan of the whole range instead
 * of reading the first rows in id order. The subquery's order is what LIMIT takes (a scan of a subquery keeps its
 * order; an ORDER BY at that level would make the planner plan the subquery for every row).
 */
export function ownerAuditQuery(
  owner: Owner,
  f: OwnerAuditFilter,
  page: { before: string | null; limit: number },
  bounds: IdBounds = { after: null, before: null },
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
  if (bounds.after !== null) where.push(`l.id > ${arg(bounds.after)}::bigint`);
  const below = [page.before, bounds.before].filter((x): x is string => x !== null).map(BigInt);
  if (below.length) where.push(`l.id < ${arg(String(below.reduce((m, x) => (x < m ? x : m))))}::bigint`);
  const inner = `SELECT l.id, l.account_id, l.token_id, l.token_kind, l.action, l.resource_kind, l.target, l.ip,
                        l.status, l.request_id, l.created_at
                   FROM audit_log l WHERE ${where.join(" AND ")} ORDER BY l.id DESC`;
  const times = [
    ...(f.from ? [`f.created_at >= ${arg(f.from)}`] : []),
    ...(f.to ? [`f.created_at < ${arg(f.to)}`] : []),
  ];
  const rows = times.length ? `SELECT * FROM (${inner} OFFSET 0) f WHERE ${times.join(" AND ")}` : inner;
  return {
    text: `SELECT s.id::text, s.account_id, a.email, s.token_id, s.token_kind, s.action, s.resource_kind, s.target, s.ip,
                  s.status, s.request_id, s.created_at
             FROM (${rows} LIMIT ${arg(page.limit)}) s JOIN accounts a ON a.id = s.account_id
            ORDER BY s.id DESC`,
    values,
  };
}

/**
 * Audit reads run in a read-only transaction without parallel plans: a keyset page reads a few dozen rows in index
 * order, and a parallel plan (which the planner may pick for a sparse filter over a long range) only adds its
 * workers' start-up and reads ahead of the limit.
 */
export function auditRead<T>(db: Db, fn: (tx: Queryable) => Promise<T>): Promise<T> {
  return inTransaction(db, async (tx) => {
    await tx.query("SET TRANSACTION READ ONLY");
    await tx.query("SET LOCAL max_parallel_workers_per_gather = 0");
    return fn(tx);
  });
}

export async function listByOwner(
  db: Db,
  owner: Owner,
  f: OwnerAuditFilter,
  page: { before: string | null; limit: number },
): Promise<OwnerAuditRow[]> {
  return auditRead(db, async (tx) => {
    const bounds = await idBounds(tx, owner, f);
    return (await tx.query<OwnerAuditRow>(ownerAuditQuery(owner, f, page, bounds))).rows;
  });
}

/** The accounts an actor filter names: an account id as given, an e-mail every account that ever had it. */
export async function actorIds(q: Queryable, actor: string): Promise<string[]> {
  if (/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(actor)) return [actor.toLowerCase()];
  return allValues<string>(q, "id", "SELECT id FROM accounts WHERE email = $1", [actor.trim().toLowerCase()]);
}
