import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { FastifyInstance } from "fastify";
import { callerOf } from "../../auth/principal.js";
import { orgOf, read, tags, write } from "../public.js";
import { DeployRules, DeployRulesView } from "./schema.js";
import type { RulesService } from "./service.js";

/** GET/PUT /v1/org/deploy-rules: the organization's deploy guardrails (README, "Deploy rules and budgets"). */
export function deployRulesRoutes(app: FastifyInstance, svc: RulesService): void {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();

  r.get(
    "/v1/org/deploy-rules",
    {
      config: {
        auth: read,
        orgRole: "member",
        errors: ["not_found"],
        summaryKo:
          "배포 규칙: 허용 형태, 최대 앱 크기, GPU, DB, 기능, 이미지 접두사, 한도, 지역, 에이전트용 요약과 프리셋.",
      },
      schema: {
        operationId: "getOrgDeployRules",
        tags,
        summary:
          "Deploy guardrails of the company context (allowed shapes, maximum app size, GPU, database sizes, features, image prefixes, limits, regions, presets) and a summary for agents (generated when the admin wrote none).",
        response: { 200: DeployRulesView },
      },
    },
    async (request) => svc.get(orgOf(request)),
  );

  r.put(
    "/v1/org/deploy-rules",
    {
      config: {
        auth: write,
        orgRole: "admin",
        errors: ["not_found", "forbidden_role"],
        summaryKo: "배포 규칙을 통째로 바꿉니다(관리자). {}는 모든 규칙을 없앱니다.",
      },
      schema: {
        operationId: "putOrgDeployRules",
        tags,
        summary:
          "Replace the deploy rules (admin); {} lifts every rule. A creation or update in the company context that breaks one gets 403 deploy_rule_violation naming it.",
        body: DeployRules,
        response: { 200: DeployRulesView },
      },
    },
    async (request) => svc.put(callerOf(request), orgOf(request), request.body),
  );
}
