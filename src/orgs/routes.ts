import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { callerOf } from "../auth/principal.js";
import { Body } from "../http/schemas.js";
import { orgOf } from "./guard.js";
import type { OrgsService } from "./service.js";
import { account, Member, memberView, Org, orgView, read, tags, Visibility, write } from "./schemas.js";
import { registerRoutes, route, type Route } from "../http/route.js";

/** The organization itself: profile, creation, settings, deletion, leaving, members list. */
export function coreRoutes(app: FastifyInstance, svc: OrgsService): void {
  const routes: Route[] = [];

  routes.push(
    route({
      method: "GET",
      url: "/v1/org",
      operationId: "getOrg",
      tags,
      summary: "The caller's organization and role (404 when the caller is in none).",
      summaryKo: "조직 프로필과 호출자의 역할.",
      auth: read,
      orgRole: "member",
      response: { 200: Org },
      handler: async (request) => orgView(await svc.get(orgOf(request))),
    }),
  );

  routes.push(
    route({
      method: "POST",
      url: "/v1/org",
      operationId: "createOrg",
      tags,
      summary: "Create an organization; the caller becomes its owner (409 when already in one).",
      summaryKo: "조직을 만듭니다. 만든 사람이 소유자가 됩니다.",
      auth: write,
      errors: ["conflict", "forbidden_role"],
      body: Body({ name: Type.String({ minLength: 1, maxLength: 100 }) }),
      response: { 201: Org },
      handler: async (request, reply) =>
        reply.code(201).send(orgView(await svc.create(callerOf(request), request.body))),
    }),
  );

  routes.push(
    route({
      method: "PATCH",
      url: "/v1/org",
      operationId: "updateOrg",
      tags,
      summary:
        "Settings (admin): name, default and maximum visibility, shared approval, image refresh policy and keep days, members_manage_all_assets; billing_mode personal|prepaid (owner).",
      summaryKo:
        "조직 설정: 이름, 기본·최대 공개 범위, 공유 승인, 이미지 갱신 정책, 구성원의 전체 자산 관리, 과금 방식(소유자).",
      auth: write,
      orgRole: "admin",
      errors: ["conflict"],
      body: Body({
        name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
        default_visibility: Type.Optional(Visibility),
        max_visibility: Type.Optional(Visibility),
        shared_approval: Type.Optional(Type.Boolean()),
        image_refresh_policy: Type.Optional(
          Type.Union([Type.Literal("off"), Type.Literal("notify"), Type.Literal("auto")]),
        ),
        image_refresh_keep_days: Type.Optional(Type.Integer({ minimum: 1, maximum: 365 })),
        billing_mode: Type.Optional(Type.Union([Type.Literal("personal"), Type.Literal("prepaid")])),
        members_manage_all_assets: Type.Optional(
          Type.Boolean({
            description:
              "true: every member changes and deletes every company asset; false (default): members only those they are responsible for",
          }),
        ),
      }),
      response: { 200: Org },
      handler: async (request) => orgView(await svc.update(callerOf(request), orgOf(request), request.body)),
    }),
  );

  routes.push(
    route({
      method: "DELETE",
      url: "/v1/org",
      operationId: "deleteOrg",
      tags,
      summary:
        "Delete the organization (owner; confirm = its name): members leave, company assets return to their creators.",
      summaryKo: "조직 삭제(소유자). confirm에 조직 이름. 회사 자산은 만든 사람에게 돌아갑니다.",
      auth: account,
      orgRole: "owner",
      errors: ["conflict"],
      body: Body({ confirm: Type.String({ minLength: 1, maxLength: 100 }) }),
      response: {
        200: Type.Object({
          deleted: Type.Boolean(),
          members_removed: Type.Integer(),
          assets_returned: Type.Integer(),
        }),
      },
      handler: async (request) => svc.remove(callerOf(request), request.body.confirm),
    }),
  );

  routes.push(
    route({
      method: "POST",
      url: "/v1/org/leave",
      operationId: "leaveOrg",
      tags,
      summary:
        "Leave the organization (the owner cannot: 409); company assets the caller is responsible for pass to the owner, personal ones stay.",
      summaryKo: "조직에서 나갑니다. 소유자는 나갈 수 없습니다(409).",
      auth: account,
      orgRole: "member",
      errors: ["conflict"],
      response: { 200: Type.Object({ left: Type.Boolean(), assets_handed_over: Type.Integer() }) },
      handler: async (request) => svc.leave(callerOf(request)),
    }),
  );

  routes.push(
    route({
      method: "GET",
      url: "/v1/org/members",
      operationId: "listOrgMembers",
      tags,
      summary: "Members with role and department.",
      summaryKo: "역할·부서와 함께 구성원 목록.",
      auth: read,
      orgRole: "member",
      response: { 200: Type.Object({ items: Type.Array(Member) }) },
      handler: async (request) => ({ items: (await svc.members(orgOf(request))).map(memberView) }),
    }),
  );
  registerRoutes(app, routes);
}
