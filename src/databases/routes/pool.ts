import { Type } from "@sinclair/typebox";
import { Body, Nullable } from "../../http/schemas.js";
import type { RouteDeps } from "./schemas.js";
import { commandRoute, readRoute } from "./instance-route.js";
import type { Route } from "../../http/route.js";

const PoolStatus = Type.Object({
  enabled: Type.Boolean(),
  mode: Type.String(),
  pooled_url: Nullable(Type.String()),
  available: Type.Boolean(),
});

/** Connection pooling (PgBouncer, transaction mode). */
export function poolRoutes({ svc }: RouteDeps): Route[] {
  return [
    readRoute(
      {
        path: "/pool",
        operationId: "getDatabasePool",
        summary: "Connection pooling (transaction mode) status and pooled URL.",
        summaryKo: "연결 풀(트랜잭션 모드) 상태.",
        schema: PoolStatus,
      },
      (p, id) => svc.poolStatus(p, id),
    ),
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
