import { Type } from "@sinclair/typebox";
import { callerOf } from "../../auth/principal.js";
import { Nullable } from "../../http/schemas.js";
import { WINDOWS, type StatsKind, type StatsService, type Window } from "./service.js";
import { route, type Route } from "../../http/route.js";

export const tags = ["stats"];

const Figures = {
  requests: Type.Integer({ description: "requests the edge answered for the app" }),
  errors_4xx: Type.Integer({ description: "answers with a 4xx status" }),
  errors_5xx: Type.Integer({ description: "answers with a 5xx status (the edge's 502/503/504 included)" }),
  p50_ms: Nullable(Type.Number({ description: "median response time in ms (to about 19 %); null without requests" })),
  p95_ms: Nullable(Type.Number({ description: "95th percentile response time in ms; null without requests" })),
  bytes_out: Type.Integer({ description: "bytes sent to visitors, headers included" }),
};

export const AppStats = Type.Object({
  days: Type.Integer(),
  from: Type.String({ format: "date", description: "first day of the window (UTC)" }),
  to: Type.String({ format: "date", description: "last day of the window: today (UTC)" }),
  daily: Type.Array(Type.Object({ date: Type.String({ format: "date" }), ...Figures }), {
    description: "every day of the window, oldest first; quiet days are zeros",
  }),
  totals: Type.Object(Figures),
});

/** ?days=7|30|90 (also the organization statistics routes) */
export const Days = Type.Object(
  {
    days: Type.Optional(
      Type.Integer({
        enum: [...WINDOWS],
        minimum: 7,
        maximum: 90,
        format: "int32",
        default: 7,
        description: "the window: 7, 30 or 90 days ending today (UTC)",
      }),
    ),
  },
  { additionalProperties: false },
);

const ROUTES: {
  kind: StatsKind;
  path: string;
  param: "id" | "slug";
  scope: "pods:read" | "static:read";
  operationId: string;
  what: string;
  summaryKo: string;
}[] = [
  {
    kind: "site",
    path: "/v1/static/:slug/stats",
    param: "slug",
    scope: "static:read",
    operationId: "getStaticSiteStats",
    what: "a static site (by slug or id)",
    summaryKo: "정적 사이트의 일별 요청, 오류, 응답 시간, 전송량.",
  },
  {
    kind: "pod",
    path: "/v1/pods/:id/stats",
    param: "id",
    scope: "pods:read",
    operationId: "getPodStats",
    what: "a pod (by id or slug)",
    summaryKo: "팟의 일별 요청, 오류, 응답 시간, 전송량.",
  },
  {
    kind: "group",
    path: "/v1/pod-groups/:id/stats",
    param: "id",
    scope: "pods:read",
    operationId: "getPodGroupStats",
    what: "a pod group (by id or slug)",
    summaryKo: "팟 그룹의 일별 요청, 오류, 응답 시간, 전송량.",
  },
];

/**
 * Daily statistics the edge recorded (README "Statistics"), for the app's owner: requests, 4xx, 5xx, p50/p95
 * response time and bytes out per UTC day over 7, 30 or 90 days. The static-site path sits beside the static
 * area's `/v1/static/{slug}` routes; apps are found through their areas' instance lookups.
 */
export function statsRoutes(stats: StatsService): Route[] {
  return ROUTES.map((target) =>
    route({
      method: "GET",
      url: target.path,
      operationId: target.operationId,
      tags,
      summary: `Daily requests, 4xx and 5xx answers, p50/p95 response time and bytes out of ${target.what}, as the edge recorded them; ?days=7 (default), 30 or 90.`,
      summaryKo: target.summaryKo,
      auth: { scope: target.scope, instance: { param: target.param } },
      params: Type.Object({
        [target.param]: Type.String({ minLength: 1, maxLength: 64, description: "id or slug" }),
      }),
      query: Days,
      response: { 200: AppStats },
      handler: async (request) => {
        const ref = (request.params as Record<string, string>)[target.param];
        const days = (request.query.days ?? 7) as Window;
        return stats.forApp(callerOf(request), target.kind, ref, days);
      },
    }),
  );
}
