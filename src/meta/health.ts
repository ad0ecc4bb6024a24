import { Type } from "@sinclair/typebox";
import type { AppContext } from "../kernel/context.js";
import { down, type ComponentStatus } from "../kernel/components.js";
import { ApiError } from "../http/errors.js";
import { Nullable } from "../http/schemas.js";
import { route, type Route } from "../http/route.js";

const Status = Type.Union([Type.Literal("up"), Type.Literal("down"), Type.Literal("off")]);
const tags = ["meta"];

/** every component this process runs, checked at once; a check that throws is down */
async function checkAll(ctx: AppContext): Promise<[string, ComponentStatus][]> {
  return Promise.all(
    [...ctx.health].map(async ([name, check]): Promise<[string, ComponentStatus]> => {
      try {
        return [name, await check()];
      } catch (err) {
        return [name, down(err instanceof Error ? err.message : String(err))];
      }
    }),
  );
}

/**
 * Liveness and readiness for operators and load balancers (the spec is silent; named as Kubernetes probes are).
 * Live: the process answers HTTP. Ready: every component this process runs (the store, the job queue, Redis where
 * REDIS_URL is set, and per role the edge, the registry, the S3 gateway) is up; `off` is one not run here. Both are
 * public and say statuses only; why a component is down is the operator's (GET /v1/operator/health).
 */
export function healthRoutes(ctx: AppContext): Route[] {
  return [
    route({
      method: "GET",
      url: "/v1/health/live",
      operationId: "getLiveness",
      tags,
      summary: "Liveness: 200 while the process serves HTTP (whatever its components say).",
      summaryKo: "생존 확인: 프로세스가 HTTP에 응답하면 200.",
      auth: { public: true },
      response: { 200: Type.Object({ status: Type.Literal("live") }) },
      handler: async () => ({ status: "live" as const }),
    }),
    route({
      method: "GET",
      url: "/v1/health/ready",
      operationId: "getReadiness",
      tags,
      summary:
        "Readiness: 200 with each component's status (store, jobs, redis, edge, registry, s3: up or off) when every component this process runs is up; 503 service_unavailable naming the ones down.",
      summaryKo:
        "준비 확인: 이 프로세스의 구성 요소(저장소, 작업 큐, 엣지, 레지스트리, S3, Redis)가 모두 살아 있으면 200, 아니면 503.",
      auth: { public: true },
      response: {
        200: Type.Object({
          status: Type.Literal("ready"),
          components: Type.Record(Type.String(), Type.Object({ status: Status })),
        }),
      },
      handler: async () => {
        const checked = await checkAll(ctx);
        const failing = checked.filter(([, c]) => c.status === "down").map(([name]) => name);
        if (failing.length)
          throw new ApiError(
            "service_unavailable",
            `Not ready: ${failing.join(", ")} ${failing.length > 1 ? "are" : "is"} down.`,
          );
        return {
          status: "ready" as const,
          components: Object.fromEntries(checked.map(([name, c]) => [name, { status: c.status }])),
        };
      },
    }),
    route({
      method: "GET",
      url: "/v1/operator/health",
      operationId: "operatorGetHealth",
      tags,
      summary:
        "Operator: readiness with each component's status and detail (the address it serves, or why it is down: a port in use, a restart in back-off); always 200.",
      summaryKo: "운영자용: 구성 요소별 상태와 원인(포트, 재시작 대기 등).",
      auth: { operator: true },
      response: {
        200: Type.Object({
          status: Type.Union([Type.Literal("ready"), Type.Literal("not_ready")]),
          components: Type.Record(Type.String(), Type.Object({ status: Status, detail: Nullable(Type.String()) })),
        }),
      },
      handler: async () => {
        const checked = await checkAll(ctx);
        return {
          status: checked.some(([, c]) => c.status === "down") ? ("not_ready" as const) : ("ready" as const),
          components: Object.fromEntries(checked),
        };
      },
    }),
  ];
}
