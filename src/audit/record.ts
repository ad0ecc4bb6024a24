import type { FastifyRequest } from "fastify";
import type { Queryable } from "../store/db.js";

/** One row per mutating request of an account, whatever its outcome. */
export async function recordAudit(q: Queryable, request: FastifyRequest, status: number): Promise<void> {
  const p = request.principal;
  if (!p) return;
  const params = (request.params ?? {}) as Record<string, string>;
  const target = params.id ?? params.slug ?? params.code ?? null;
  const action = (request.routeOptions.schema as { operationId?: string } | undefined)?.operationId
    ?? `${request.method} ${request.routeOptions.url ?? request.url}`;
  await q.query(
    `INSERT INTO audit_log (account_id, token_id, token_kind, action, target, ip, status, request_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
    [p.accountId, p.tokenId, p.kind, action, target, request.ip, status, request.id],
  );
}
