import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import type { OwnedResource } from "../public.js";
import { AppStats, Days, type StatsView, type Window } from "../../edge/public.js";
import { orgOf, read, tags } from "../public.js";
import type { OrgStatsService } from "./service.js";
import { registerRoutes, route, type Route } from "../../http/route.js";

const Site = {
  kind: Type.Union([Type.Literal("site"), Type.Literal("pod"), Type.Literal("pod-group")]),
  id: Type.String(),
  slug: Type.String(),
  name: Type.String(),
  state: Type.String(),
  responsible_account_id: Type.String({ description: "the member who created it (or took it over)" }),
};
const SiteStats = Type.Object({ ...Site, daily: AppStats.properties.daily, totals: AppStats.properties.totals });

const siteView = (s: OwnedResource) => ({
  kind: s.kind as "site" | "pod" | "pod-group",
  id: s.id,
  slug: s.slug ?? s.id,
  name: s.name,
  state: s.state,
  responsible_account_id: s.accountId,
});

/** GET /v1/org/stats/sites and /{slug}: the edge's daily statistics of company deployments. */
export function orgStatsRoutes(app: FastifyInstance, svc: OrgStatsService): void {
  const routes: Route[] = [];

  routes.push(
    route({
      method: "GET",
      url: "/v1/org/stats/sites",
      operationId: "listOrgSiteStats",
      tags,
      summary:
        "Admin: daily requests, 4xx/5xx answers, p50/p95 response time and bytes out of every company deployment (static sites, pods, pod groups of all members), each and summed; ?days=7 (default), 30 or 90.",
      summaryKo: "모든 구성원의 회사 배포(정적 사이트, 팟, 팟 그룹)의 일별 요청, 오류, 응답 시간, 전송량(관리자).",
      auth: read,
      orgRole: "admin",
      query: Days,
      response: { 200: Type.Composite([AppStats, Type.Object({ sites: Type.Array(SiteStats) })]) },
      handler: async (request) => {
        const days = (request.query.days ?? 7) as Window;
        const { sites, total } = await svc.all(orgOf(request), days);
        return {
          ...total,
          sites: sites.map(({ site, stats }: { site: OwnedResource; stats: StatsView }) => ({
            ...siteView(site),
            daily: stats.daily,
            totals: stats.totals,
          })),
        };
      },
    }),
  );

  routes.push(
    route({
      method: "GET",
      url: "/v1/org/stats/sites/:slug",
      operationId: "getOrgSiteStats",
      tags,
      summary:
        "Daily statistics of one company deployment (slug or id); a personal or another organization's deployment is 404; ?days=7 (default), 30 or 90.",
      summaryKo: "회사 배포 하나의 일별 요청, 오류, 응답 시간, 전송량.",
      auth: read,
      orgRole: "member",
      params: Type.Object({ slug: Type.String({ minLength: 1, maxLength: 64, description: "slug or id" }) }),
      query: Days,
      response: { 200: Type.Composite([Type.Object(Site), AppStats]) },
      handler: async (request) => {
        const days = (request.query.days ?? 7) as Window;
        const { site, stats } = await svc.one(orgOf(request), request.params.slug, days);
        return { ...siteView(site), ...stats };
      },
    }),
  );
  registerRoutes(app, routes);
}
