import type { Db } from "../store/db.js";
import type { Principal } from "../auth/principal.js";
import { badRequest } from "../http/errors.js";
import { keysetPage, sequenceCursor } from "../http/keyset-page.js";
import type { Owner } from "../kernel/owner.js";
import * as repo from "./repo.js";

/**
 * The caller's own activity log: the rows of every mutating request the calling account made, newest
 * first. The cursor is the id of the last row seen, so pages stay stable while new rows arrive.
 */
export async function listOwnAudit(db: Db, principal: Principal, limit: number, cursor?: string) {
  const before = sequenceCursor(cursor);
  const rows = await repo.listByActor(db, principal.accountId, { before, limit: limit + 1 });
  return keysetPage(
    rows,
    limit,
    (r) => ({
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
    }),
    (r) => r.id,
  );
}

export interface OwnerAuditQuery {
  /** an account id or an e-mail */
  actor?: string;
  action?: string;
  resource_kind?: string;
  /** RFC 3339: rows at or after */
  from?: string;
  /** RFC 3339: rows before */
  to?: string;
  limit: number;
  cursor?: string;
}

const time = (value: string | undefined, name: string): Date | undefined => {
  if (value === undefined) return undefined;
  const d = new Date(value);
  if (Number.isNaN(d.getTime())) throw badRequest("invalid_request", `${name} must be an RFC 3339 time.`);
  return d;
};

/**
 * Every audit row of an owner (an organization: its members acting in the company context, its keys, its own
 * /v1/org routes), newest first, filtered by actor, action (operationId), resource kind and a from/to range, in
 * keyset pages on id (repo.ts, listByOwner, says how each filter stays an index scan).
 */
export async function listOwnerAudit(db: Db, owner: Owner, query: OwnerAuditQuery) {
  const before = sequenceCursor(query.cursor);
  const from = time(query.from, "from");
  const to = time(query.to, "to");
  if (from && to && from >= to) throw badRequest("invalid_request", "from must be before to.");
  const accountIds = query.actor === undefined ? undefined : await repo.actorIds(db, query.actor);
  if (accountIds && !accountIds.length) return { items: [], next_cursor: null };
  const rows = await repo.listByOwner(
    db,
    owner,
    { accountIds, action: query.action, resourceKind: query.resource_kind, from, to },
    { before, limit: query.limit + 1 },
  );
  return keysetPage(
    rows,
    query.limit,
    (r) => ({
      id: r.id,
      actor: { id: r.account_id, email: r.email },
      token_kind: r.token_kind,
      action: r.action,
      resource_kind: r.resource_kind,
      target: r.target,
      status: r.status,
      ip: r.ip,
      request_id: r.request_id,
      created_at: r.created_at.toISOString(),
    }),
    (r) => r.id,
  );
}
