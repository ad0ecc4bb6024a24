import { Type } from "@sinclair/typebox";
import type { AppContext } from "../kernel/context.js";
import { Nullable } from "../http/schemas.js";
import { route, type Route } from "../http/route.js";
import { callerOf } from "../auth/principal.js";
import { metricsService } from "./service.js";
import { operatorMetrics } from "./operator-metrics.js";

const Point = Type.Object({
  at: Type.String({ format: "date-time", description: "start of the step" }),
  cpu_percent: Nullable(Type.Number({ description: "percent of one CPU, averaged over the step" })),
  memory_bytes: Nullable(Type.Integer({ description: "highest memory use sampled in the step" })),
  memory_limit_bytes: Nullable(Type.Integer()),
  restarts: Type.Integer({ description: "restarts of the pod during the step" }),
  requests: Type.Integer(),
  errors_4xx: Type.Integer(),
  errors_5xx: Type.Integer(),
  p50_ms: Nullable(Type.Number()),
  p95_ms: Nullable(Type.Number()),
  p99_ms: Nullable(Type.Number()),
});

const PodMetrics = Type.Object({
  pod_id: Type.String(),
  from: Type.String({ format: "date-time" }),
  to: Type.String({ format: "date-time" }),
  step: Type.Integer(),
  points: Type.Array(Point),
});

export function metricsRoutes(ctx: AppContext): Route[] {
  const metrics = metricsService({ db: ctx.db, kernel: ctx.kernel });
  return [
    route({
      method: "GET",
      url: "/v1/pods/:id/metrics",
      operationId: "getPodMetrics",
      tags: ["metrics"],
      summary:
        "Per-step series of a pod (by id or slug): CPU, memory and restarts from the runtime; requests, 4xx, 5xx and p50/p95/p99 response time from the edge. ?from&to (ISO 8601; default the last hour) &step (seconds, a multiple of 60; default 60). Kept 7 days.",
      summaryKo: "팟의 분 단위 지표(CPU, 메모리, 재시작, 요청, 오류, 응답 시간).",
      auth: { scope: "pods:read", instance: { param: "id" } },
      errors: ["bad_metrics_window"],
      params: Type.Object({ id: Type.String({ minLength: 1, maxLength: 64, description: "id or slug" }) }),
      query: Type.Object({
        from: Type.Optional(Type.String({ format: "date-time" })),
        to: Type.Optional(Type.String({ format: "date-time" })),
        step: Type.Optional(Type.Integer({ minimum: 60, maximum: 86_400, default: 60 })),
      }),
      response: { 200: PodMetrics },
      handler: async (request) => metrics.forPod(callerOf(request), request.params.id, request.query),
    }),
    route({
      method: "GET",
      url: "/v1/operator/metrics",
      operationId: "operatorGetMetrics",
      tags: ["operator"],
      summary:
        "Operator: Prometheus text format (0.0.4): components up/down (platform_component_up), job queue depth (platform_job_queue_waiting) and each running pod's latest per-minute sample (platform_pod_*).",
      summaryKo: "운영자용: 프로메테우스 형식의 플랫폼 상태와 팟 지표.",
      auth: { operator: true },
      response: {
        200: { description: "Prometheus text format", content: { "text/plain": { schema: Type.String() } } },
      },
      handler: async (_request, reply) => {
        const text = await operatorMetrics(ctx);
        return reply.type("text/plain; version=0.0.4; charset=utf-8").send(text);
      },
    }),
  ];
}
