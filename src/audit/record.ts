import type { FastifyRequest } from "fastify";
import type pg from "pg";
import { inTransaction, type Db, type Queryable } from "../store/db.js";
import type { AuditDraft, Principal } from "../auth/principal.js";
import type { AuthRule } from "../http/auth-rule.js";
import { createOnce, idempotentChangeOf } from "../http/idempotent-change.js";
import * as repo from "./repo.js";

/**
 * Audit rows: one per mutating request of an account, whatever its outcome. A successful change
 * writes its row inside its own transaction (`auditedTransaction`), so the row commits with the change
 * or not at all. Requests that changed nothing (refused, failed) get their row from the HTTP layer
 * after the answer is decided (`recordRequestAudit`).
 */
export function auditDraft(request: FastifyRequest, successStatus: number): AuditDraft {
  const params = (request.params ?? {}) as Record<string, string>;
  const schema = request.routeOptions.schema as { operationId?: string; tags?: string[] } | undefined;
  // known once the key is claimed (preHandler): a draft made later by a handler carries it too
  const idempotency = idempotentChangeOf(request);
  return {
    action: schema?.operationId ?? `${request.method} ${request.routeOptions.url ?? request.url}`,
    resourceKind: resourceKindOf(request.routeOptions.config.auth, schema?.tags),
    target: params.id ?? params.slug ?? params.code ?? null,
    ip: request.ip,
    requestId: request.id,
    status: successStatus,
    written: false,
    ...(idempotency && { idempotency }),
  };
}

/** The resource kind of a route's audit rows: the resource of its scope ("pods:write" → "pods"), else its first tag. */
export function resourceKindOf(auth: AuthRule | undefined, tags: string[] | undefined): string | null {
  if (auth && "scope" in auth) return auth.scope.split(":")[0];
  return tags?.[0] ?? null;
}

function insertAudit(q: Queryable, p: Principal, d: AuditDraft, status: number): Promise<void> {
  return repo.insertAudit(q, {
    accountId: p.accountId,
    owner: p.owner,
    tokenId: p.tokenId,
    tokenKind: p.kind,
    action: d.action,
    resourceKind: d.resourceKind ?? null,
    target: d.target,
    ip: d.ip,
    status,
    requestId: d.requestId,
  });
}

/**
 * The transaction of a change made for a caller: the caller's audit row (if this is an audited
 * request) is inserted before COMMIT, so a failing audit insert rolls the change back.
 */
export async function auditedTransaction<T>(
  db: Db,
  principal: Principal | null,
  fn: (tx: pg.PoolClient) => Promise<T>,
): Promise<T> {
  const draft = principal?.audit;
  const result = await inTransaction(db, async (tx) => {
    // a create's first transaction under an Idempotency-Key commits its result with the key; a retry after a crash
    // gets the earlier attempt's result (and its audit row stands) instead of creating again (http/idempotent-change.ts)
    const made = await createOnce(tx, draft?.written ? null : draft, () => fn(tx));
    if (principal && draft && !draft.written && !made.replayed) await insertAudit(tx, principal, draft, draft.status);
    return made.value;
  });
  if (draft) draft.written = true;
  return result;
}

/** The HTTP layer's row for a mutation no transaction recorded (refused or failed requests). */
export async function recordRequestAudit(q: Queryable, request: FastifyRequest, status: number): Promise<void> {
  const p = request.principal;
  if (!p?.audit || p.audit.written) return;
  await insertAudit(q, p, p.audit, status);
  p.audit.written = true;
}
