import type { Queryable } from "../store/db.js";
import { badRequest } from "../http/errors.js";

/** Newest first; the cursor is the id of the last row seen, so pages stay stable while new rows arrive. */
export async function listAudit(q: Queryable, accountId: string, limit: number, cursor?: string) {
  if (cursor !== undefined && !/^\d{1,18}$/.test(cursor)) throw badRequest("invalid_request", "cursor is not one this endpoint returned.");
  const { rows } = await q.query<{
    id: string; account_id: string; token_id: string | null; token_kind: string | null; action: string; target: string | null;
    ip: string | null; status: number; request_id: string | null; created_at: Date;
  }>(
    `SELECT id::text, account_id, token_id, token_kind, action, target, ip, status, request_id, created_at
       FROM audit_log WHERE account_id = $1 AND ($2::bigint IS NULL OR id < $2::bigint)
      ORDER BY id DESC LIMIT $3`,
    [accountId, cursor ?? null, limit + 1],
  );
  const page = rows.slice(0, limit);
  return {
    items: page.map((r) => ({
      id: r.id, actor: r.account_id, token_id: r.token_id, token_kind: r.token_kind, action: r.action, target: r.target,
      ip: r.ip, status: r.status, request_id: r.request_id, created_at: r.created_at.toISOString(),
    })),
    next_cursor: rows.length > limit ? page[page.length - 1].id : null,
  };
}
