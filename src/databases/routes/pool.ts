import { Type } from "@sinclair/typebox";
import { Body, Nullable } from "../../http/schemas.js";
import { caller, Params, read, tags, type RouteDeps } from "./schemas.js";
import { commandRoute } from "./instance-route.js";
import { route, type Route } from "../../http/route.js";

const PoolStatus = Type.Object({
  enabled: Type.Boolean(),
  mode: Type.String(),
  pooled_url: Nullable(Type.String()),
  available: Type.Boolean(),
});

/** Connection pooling (PgBouncer, transaction mode). */
export function poolRoutes({ svc }: RouteDeps): Route[] {
  return [
    route({
      method: "GET",
      url: "/v1/databases/:id/pool",
      operationId: "getDatabasePool",
      tags,
      summary: "Connection pooling (transaction mode) status and pooled URL.",
      summaryKo: "연결 풀(트랜잭션 모드) 상태.",
      auth: read,
      params: Params,
      response: { 200: PoolStatus },
      handler: async (request) => svc.poolStatus(caller(request), request.params.id),
    }),
    commandRoute(
      {
        method: "PUT",
        path: "/pool",
        operationId: "setDatabasePool",
        summary: "Turn transaction-mode pooling on or off.",
        summaryKo: "연결 풀을 켜거나 끕니다.",
        admits: true,
        errors: ["database_removed", "pool_unavailable"],
        body: Body({ enabled: Type.Boolean() }),
      },
      (p, id, body) => svc.pool(p, id, body.enabled),
    ),
  ];
}
