import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { callerOf } from "../../auth/principal.js";
import { Body, Nullable } from "../../http/schemas.js";
import { account, IdParams, Member, memberView, orgOf, tags } from "../public.js";
import type { MemberAdminService } from "./members.js";
import { InviteRole } from "./schemas.js";
import { registerRoutes, route, type Route } from "../../http/route.js";

/** PATCH and DELETE /v1/org/members/{id} (id: the member's account id). */
export function memberRoutes(app: FastifyInstance, svc: MemberAdminService): void {
  const routes: Route[] = [];

  routes.push(
    route({
      method: "PATCH",
      url: "/v1/org/members/:id",
      operationId: "updateOrgMember",
      tags,
      summary:
        "Change a member's role or department (admin; department by id or code, null unassigns). Granting admin and changing an admin are the owner's (403); the owner is 409.",
      summaryKo: "구성원의 역할 또는 부서 변경(관리자). 관리자 지정·해제와 관리자 변경은 소유자만, 소유자는 409.",
      auth: account,
      orgRole: "admin",
      errors: ["conflict", "invalid_request", "unknown_department"],
      params: IdParams,
      body: Body({
        role: Type.Optional(InviteRole),
        department_id: Type.Optional(Nullable(Type.String({ maxLength: 100 }))),
        department_code: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 100 }))),
      }),
      response: { 200: Member },
      handler: async (request) =>
        memberView(await svc.update(callerOf(request), orgOf(request), request.params.id, request.body)),
    }),
  );

  routes.push(
    route({
      method: "DELETE",
      url: "/v1/org/members/:id",
      operationId: "removeOrgMember",
      tags,
      summary:
        "Remove a member (admin; an admin is the owner's to remove): company assets they are responsible for pass to the owner, personal ones stay theirs. The owner and oneself (use leave) are 409.",
      summaryKo: "구성원 내보내기(관리자). 회사 자산은 소유자에게, 개인 자산은 그대로. 소유자·본인은 409.",
      auth: account,
      orgRole: "admin",
      errors: ["conflict"],
      params: IdParams,
      response: { 200: Type.Object({ removed: Type.Boolean(), assets_handed_over: Type.Integer() }) },
      handler: async (request) => svc.remove(callerOf(request), orgOf(request), request.params.id),
    }),
  );
  registerRoutes(app, routes);
}
