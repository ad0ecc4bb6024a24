import { Type, type TSchema } from "@sinclair/typebox";
import type { AppContext } from "../kernel/context.js";
import { route, type Route } from "../http/route.js";
import { callerOf, type Principal } from "../auth/principal.js";
import { metricsService, type WindowQuery } from "./service.js";
import { OperatorMetrics } from "./operator-metrics.js";
import { DatabaseMetrics, GroupMetrics, PodMetrics, SiteMetrics, WindowParams } from "./schemas.js";

const WINDOW_HELP =
  "?from&to (ISO 8601; default the last hour) &step (seconds, a multiple of 60; default 60; whole hours read the hourly roll-up, kept 90 days; finer steps read minutes, kept 7 days; at most 1440 points).";

export function metricsRoutes(ctx: AppContext): Route[] {
  const metrics = metricsService({ db: ctx.db, kernel: ctx.kernel });
  // made on the first scrape: an app that is never scraped keeps no registry and no process-metric observers
  let operator: OperatorMetrics | undefined;
  const series = (o: {
    url: string;
    param: "id" | "slug";
    operationId: string;
    scope: "pods:read" | "static:read" | "databases:read";
    summary: string;
    summaryKo: string;
    response: TSchema;
    get: (p: Principal, ref: string, q: WindowQuery) => Promise<unknown>;
  }) =>
    route({
      method: "GET",
      url: o.url,
      operationId: o.operationId,
      tags: ["metrics"],
      summary: `${o.summary} ${WINDOW_HELP}`,
      summaryKo: o.summaryKo,
      auth: { scope: o.scope, instance: { param: o.param } },
      errors: ["bad_metrics_window"],
      params: Type.Object({ [o.param]: Type.String({ minLength: 1, maxLength: 64, description: "id or slug" }) }),
      query: WindowParams,
      response: { 200: o.response },
      handler: async (request) =>
        o.get(callerOf(request), (request.params as Record<string, string>)[o.param], request.query),
    });
  return [
    series({
      url: "/v1/pods/:id/metrics",
      param: "id",
      operationId: "getPodMetrics",
      scope: "pods:read",
      summary:
        "Per-step series of a pod (by id or slug): CPU, memory and restarts from the runtime; requests, 4xx, 5xx, bytes and p50/p95/p99 response time from the edge.",
      summaryKo: "팟의 분 단위 지표(CPU, 메모리, 재시작, 요청, 오류, 응답 시간).",
      response: PodMetrics,
      get: (p, ref, q) => metrics.forPod(p, ref, q),
    }),
    series({
      url: "/v1/pod-groups/:id/metrics",
      param: "id",
      operationId: "getPodGroupMetrics",
      scope: "pods:read",
      summary:
        "Per-step series of a pod group (by id or slug): its members' CPU, memory and restarts added; requests, 4xx, 5xx, bytes and response times of the group's host.",
      summaryKo: "팟 그룹의 분 단위 지표(멤버 합계와 요청, 오류, 응답 시간).",
      response: GroupMetrics,
      get: (p, ref, q) => metrics.forGroup(p, ref, q),
    }),
    series({
      url: "/v1/static/:slug/metrics",
      param: "slug",
      operationId: "getStaticSiteMetrics",
      scope: "static:read",
      summary: "Per-step series of a static site (by slug or id): requests, 4xx, 5xx, p50/p95 response time and bytes.",
      summaryKo: "정적 사이트의 분 단위 지표(요청, 오류, 응답 시간, 전송량).",
      response: SiteMetrics,
      get: (p, ref, q) => metrics.forSite(p, ref, q),
    }),
    series({
      url: "/v1/databases/:id/metrics",
      param: "id",
      operationId: "getDatabaseMetrics",
      scope: "databases:read",
      summary:
        "Per-step series of a database (by id or slug): connections, commits per second, size, cache hit ratio, replication lag (HA), and the age of the newest base backup and of the last archived WAL.",
      summaryKo: "데이터베이스의 분 단위 지표(연결, 커밋, 크기, 캐시 적중률, 복제 지연, 백업 경과).",
      response: DatabaseMetrics,
      get: (p, ref, q) => metrics.forDatabase(p, ref, q),
    }),
    route({
      method: "GET",
      url: "/v1/operator/metrics",
      operationId: "operatorGetMetrics",
      tags: ["operator"],
      summary:
        "Operator: Prometheus text format (0.0.4): components up/down (platform_component_up), readiness (platform_ready), job queue depth (platform_job_queue_waiting), the process's own metrics (process_*, nodejs_*, through prom-client), each running pod's and database's latest per-minute sample (platform_pod_*, platform_database_*) and each app's traffic over the last 5 minutes (platform_app_*).",
      summaryKo: "운영자용: 프로메테우스 형식의 플랫폼 상태와 팟, 그룹, 데이터베이스, 사이트 지표.",
      auth: { operator: true },
      response: {
        200: { description: "Prometheus text format", content: { "text/plain": { schema: Type.String() } } },
      },
      handler: async (_request, reply) => {
        operator ??= new OperatorMetrics(ctx);
        const text = await operator.scrape();
        return reply.type(operator.contentType).send(text);
      },
    }),
  ];
}
