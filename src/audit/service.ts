import type { Db } from "../store/db.js";
import type { Principal } from "../auth/principal.js";
import { badRequest } from "../http/errors.js";
import * as repo from "./repo.js";

/**
 * The caller's own activity log: the rows of every mutating request the calling account made, newest
 * first. The cursor is the id of the last row seen, so pages stay stable while new rows arrive.
 */
export async function listOwnAudit(db: Db, principal: Principal, limit: number, cursor?: string) {
  if (cursor !== undefined && !/^\d{1,18}$/.test(cursor))
    throw badRequest("invalid_request", "cursor is not one this endpoint returned.");
  const rows = await repo.listByActor(db, principal.accountId, { before: cursor ?? null, limit: limit + 1 });
  const page = rows.slice(0, limit);
  return {
    items: page.map((r) => ({
      id: r.id,
      actor: r.account_id,
      token_id: r.token_id,
      token_kind: r.token_kind,
      action: r.action,
      target: r.target,
      ip: r.ip,
      status: r.status,
      request_id: r.request_id,
      created_at: r.created_at.toISOString(),
    })),
    next_cursor: rows.length > limit ? page[page.length - 1].id : null,
  };
}
