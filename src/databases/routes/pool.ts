import { Type } from "@sinclair/typebox";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { FastifyInstance } from "fastify";
import { Body, Nullable } from "../../http/schemas.js";
import { Accepted, caller, Params, read, tags, write, type RouteDeps } from "./schemas.js";

const PoolStatus = Type.Object({
  enabled: Type.Boolean(),
  mode: Type.String(),
  pooled_url: Nullable(Type.String()),
  available: Type.Boolean(),
});

/** Connection pooling (PgBouncer, transaction mode). */
export function poolRoutes(app: FastifyInstance, { svc }: RouteDeps): void {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();

  r.get(
    "/v1/databases/:id/pool",
    {
      config: { auth: read, errors: ["not_found"], summaryKo: "연결 풀(트랜잭션 모드) 상태." },
      schema: {
        operationId: "getDatabasePool",
        tags,
        summary: "Connection pooling (transaction mode) status and pooled URL.",
        params: Params,
        response: { 200: PoolStatus },
      },
    },
    async (request) => svc.poolStatus(caller(request), request.params.id),
  );

  r.put(
    "/v1/databases/:id/pool",
    {
      config: {
        auth: write,
        errors: ["not_found", "database_removed", "pool_unavailable", "deploy_rule_violation"],
        summaryKo: "연결 풀을 켜거나 끕니다.",
      },
      schema: {
        operationId: "setDatabasePool",
        tags,
        summary: "Turn transaction-mode pooling on or off.",
        params: Params,
        body: Body({ enabled: Type.Boolean() }),
        response: { 202: Accepted },
      },
    },
    async (request, reply) =>
      reply
        .code(202)
        .send({ command_id: (await svc.pool(caller(request), request.params.id, request.body.enabled)).commandId }),
  );
}
