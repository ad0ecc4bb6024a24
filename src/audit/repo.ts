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
    target: string | null;
    ip: string;
    status: number;
    requestId: string;
  },
): Promise<void> {
  await q.query(
    `INSERT INTO audit_log (account_id, owner_kind, owner_id, token_id, token_kind, action, target, ip, status, request_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
    [r.accountId, r.owner.kind, r.owner.id, r.tokenId, r.tokenKind, r.action, r.target, r.ip, r.status, r.requestId],
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
