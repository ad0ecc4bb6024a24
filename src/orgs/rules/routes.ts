import type { FastifyInstance } from "fastify";
import { callerOf } from "../../auth/principal.js";
import { orgOf, read, tags, write } from "../public.js";
import { DeployRules, DeployRulesView } from "./schema.js";
import type { RulesService } from "./service.js";
import { registerRoutes, route, type Route } from "../../http/route.js";

/** GET/PUT /v1/org/deploy-rules: the organization's deploy guardrails (README, "Deploy rules and budgets"). */
export function deployRulesRoutes(app: FastifyInstance, svc: RulesService): void {
  const routes: Route[] = [];

  routes.push(
    route({
      method: "GET",
      url: "/v1/org/deploy-rules",
      operationId: "getOrgDeployRules",
      tags,
      summary:
        "Deploy guardrails of the company context (allowed shapes, maximum app size, GPU, database sizes, features, image prefixes, limits, regions, presets) and a summary for agents (generated when the admin wrote none).",
      summaryKo:
        "배포 규칙: 허용 형태, 최대 앱 크기, GPU, DB, 기능, 이미지 접두사, 한도, 지역, 에이전트용 요약과 프리셋.",
      auth: read,
      orgRole: "member",
      response: { 200: DeployRulesView },
      handler: async (request) => svc.get(orgOf(request)),
    }),
  );

  routes.push(
    route({
      method: "PUT",
      url: "/v1/org/deploy-rules",
      operationId: "putOrgDeployRules",
      tags,
      summary:
        "Replace the deploy rules (admin); {} lifts every rule. A creation or update in the company context that breaks one gets 403 deploy_rule_violation naming it.",
      summaryKo: "배포 규칙을 통째로 바꿉니다(관리자). {}는 모든 규칙을 없앱니다.",
      auth: write,
      orgRole: "admin",
      body: DeployRules,
      response: { 200: DeployRulesView },
      handler: async (request) => svc.put(callerOf(request), orgOf(request), request.body),
    }),
  );
  registerRoutes(app, routes);
}
