import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { callerOf } from "../../auth/principal.js";
import { ApiKey, KeyRequestBody, keyView, type KeyRow } from "../../auth/api-keys.js";
import { Nullable, PageQuery, Timestamp } from "../../http/schemas.js";
import { account, orgOf, read, tags } from "../public.js";
import { orgAuditService, type OrgAuditDeps } from "./service.js";
import { registerRoutes, route, type Route } from "../../http/route.js";
import { noContentAfter } from "../../http/no-content.js";

const Actor = Type.Object({ id: Type.String(), email: Type.String() });

const OrgApiKey = Type.Composite([ApiKey, Type.Object({ issued_by: Actor })]);

const orgKeyView = (k: KeyRow) => ({ ...keyView(k), issued_by: { id: k.account_id, email: k.issuer_email } });

const OrgAuditPage = Type.Object({
  items: Type.Array(
    Type.Object({
      id: Type.String(),
      actor: Actor,
      token_kind: Nullable(Type.String({ description: "full (a sign-in session) or scoped (an API key)" })),
      action: Type.String({ description: "the route's operationId" }),
      resource_kind: Nullable(Type.String({ description: "pods, static, databases, org, billing ..." })),
      target: Nullable(Type.String()),
      status: Type.Integer(),
      ip: Nullable(Type.String()),
      request_id: Nullable(Type.String()),
      created_at: Timestamp,
    }),
  ),
  next_cursor: Nullable(Type.String()),
});

/** Organization API keys (GET/POST/DELETE /v1/org/api-keys) and the organization audit log (GET /v1/org/audit). */
export function auditRoutes(app: FastifyInstance, deps: OrgAuditDeps): void {
  const svc = orgAuditService(deps);
  const routes: Route[] = [];

  routes.push(
    route({
      method: "GET",
      url: "/v1/org/api-keys",
      operationId: "listOrgApiKeys",
      tags,
      summary: "The organization's API keys (admin): issuer, prefix, scopes, last use; never their secrets.",
      summaryKo: "조직 API 키 목록(발급자, 접두어, 범위, 마지막 사용).",
      auth: account,
      orgRole: "admin",
      response: { 200: Type.Object({ items: Type.Array(OrgApiKey) }) },
      handler: async (request) => ({ items: (await svc.listKeys(orgOf(request))).map(orgKeyView) }),
    }),
  );

  routes.push(
    route({
      method: "POST",
      url: "/v1/org/api-keys",
      operationId: "createOrgApiKey",
      tags,
      summary:
        "Issue an organization key (admin; opk_…, shown once): it acts for the organization with the issuer's role (at most admin); what it creates is a company asset, what it does is in the organization audit log.",
      summaryKo: "조직 API 키 발급(관리자). 이 키로 만든 리소스는 회사 자산이고 조직 감사 기록에 남습니다.",
      auth: account,
      orgRole: "admin",
      errors: ["invalid_scope"],
      body: KeyRequestBody,
      response: {
        201: Type.Composite([OrgApiKey, Type.Object({ key: Type.String({ description: "shown once" }) })]),
      },
      handler: async (request, reply) => {
        const m = orgOf(request);
        const issued = await svc.issueKey(callerOf(request), m, request.body);
        const view = orgKeyView({ ...issued.row, issuer_email: issued.issuerEmail });
        return reply.code(201).send({ ...view, key: issued.secret });
      },
    }),
  );

  routes.push(
    route({
      method: "DELETE",
      url: "/v1/org/api-keys/:id",
      operationId: "revokeOrgApiKey",
      tags,
      summary: "Revoke an organization key (admin, whoever issued it); every API process refuses it at once.",
      summaryKo: "조직 API 키 폐기(관리자). 모든 API 프로세스에서 즉시 거부됩니다.",
      auth: account,
      orgRole: "admin",
      params: Type.Object({ id: Type.String({ format: "uuid" }) }),
      response: { 204: Type.Null() },
      handler: async (request, reply) =>
        noContentAfter(reply, svc.revokeKey(callerOf(request), orgOf(request), request.params.id)),
    }),
  );

  routes.push(
    route({
      method: "GET",
      url: "/v1/org/audit",
      operationId: "listOrgAudit",
      tags,
      summary:
        "Organization audit log (admin), newest first: members acting for the organization, organization keys, /v1/org changes; ?actor=(account id or e-mail)&action=(operationId)&resource_kind=&from=&to=(RFC 3339)&limit=&cursor=.",
      summaryKo: "조직 감사 기록(관리자): 구성원의 회사 작업, 조직 키, 조직 설정 변경. 필터와 커서 페이지.",
      auth: read,
      orgRole: "admin",
      query: Type.Composite(
        [
          PageQuery,
          Type.Object({
            actor: Type.Optional(Type.String({ minLength: 1, maxLength: 320, description: "account id or e-mail" })),
            action: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: "an operationId" })),
            resource_kind: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
            from: Type.Optional(Type.String({ format: "date-time", description: "at or after (RFC 3339)" })),
            to: Type.Optional(Type.String({ format: "date-time", description: "before (RFC 3339)" })),
          }),
        ],
        { additionalProperties: false },
      ),
      response: { 200: OrgAuditPage },
      handler: async (request) => svc.audit(orgOf(request), { ...request.query, limit: request.query.limit ?? 50 }),
    }),
  );
  registerRoutes(app, routes);
}
