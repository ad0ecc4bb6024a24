import { Type, type Static } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import type { AppContext } from "../../kernel/context.js";
import { callerOf } from "../../auth/principal.js";
import { ApiError } from "../../http/errors.js";
import { int } from "../../config/config.js";
import { Body, Nullable } from "../../http/schemas.js";
import { account, IdParams, Org, orgOf, orgView, publicBaseUrl, read, tags, write } from "../public.js";
import { memberRoutes } from "./members-routes.js";
import { memberAdminService } from "./members.js";
import { Invite, InviteBody, InviteOutcome, inviteView, outcomeView, Preview } from "./schemas.js";
import { invitesService, type InviteRequest } from "./service.js";
import { registerRoutes, route, type Route } from "../../http/route.js";

/** The one shape the service takes: invites[] as given, or emails[] with the shared role and department. */
function inviteRequests(body: Static<typeof InviteBody>): InviteRequest[] {
  const { invites, emails, ...shared } = body;
  if ((invites === undefined) === (emails === undefined))
    throw new ApiError("invalid_request", "Give either invites (a list of {email, role, department}) or emails.");
  if (invites) {
    if (Object.keys(shared).length)
      throw new ApiError("invalid_request", "role and the department go inside each of invites[] (or use emails[]).");
    return invites;
  }
  return emails!.map((email) => ({ email, ...shared }));
}

/** Invitations (/v1/org/invites) and member changes (/v1/org/members/{id}); README.md "Invitations and members". */
export function inviteRoutes(app: FastifyInstance, ctx: AppContext): void {
  const deps = { db: ctx.db, kernel: ctx.kernel, tokens: ctx.tokens };
  const svc = invitesService({
    ...deps,
    log: ctx.log,
    baseUrl: publicBaseUrl(ctx.env, ctx.config),
    perDay: int(ctx.env, "ORG_INVITES_PER_DAY", 500, 1, 100_000),
  });
  const routes: Route[] = [];

  routes.push(
    route({
      method: "GET",
      url: "/v1/org/invites",
      operationId: "listOrgInvites",
      tags,
      summary: "Pending invitations (admin), newest first; expired ones show expired=true until renewed.",
      summaryKo: "대기 중인 초대 목록(관리자). 만료된 초대도 expired=true로 보입니다.",
      auth: read,
      orgRole: "admin",
      response: { 200: Type.Object({ items: Type.Array(Invite) }) },
      handler: async (request) => ({ items: (await svc.list(orgOf(request))).map(inviteView) }),
    }),
  );

  routes.push(
    route({
      method: "POST",
      url: "/v1/org/invites",
      operationId: "inviteOrgMembers",
      tags,
      summary:
        "Invite by e-mail, 1-50 addresses at once, valid 7 days; per-address result. Admin invitations are the owner's. The link is in the answer only when the platform sends no mail.",
      summaryKo: "이메일로 초대(1-50명, 7일 유효). 주소마다 결과. 관리자 초대는 소유자만.",
      auth: account,
      orgRole: "admin",
      errors: ["invalid_request", "unknown_department"],
      body: InviteBody,
      response: { 200: Type.Object({ items: Type.Array(InviteOutcome) }) },
      handler: async (request) => {
        const items = inviteRequests(request.body);
        const results = await svc.invite(callerOf(request), orgOf(request), items);
        return { items: results.map(outcomeView) };
      },
    }),
  );

  routes.push(
    route({
      method: "GET",
      url: "/v1/org/invites/preview",
      operationId: "previewOrgInvite",
      tags,
      summary:
        "Preview an invitation link's token (public): organization, inviter, role, masked address, status (pending, expired, accepted, withdrawn), expiry.",
      summaryKo: "초대 링크 미리보기(로그인 불필요): 조직, 초대한 사람, 역할, 상태, 만료.",
      auth: { public: true },
      errors: ["not_found"],
      query: Type.Object({ token: Type.String({ minLength: 1, maxLength: 200 }) }),
      response: { 200: Preview },
      handler: async (request) => svc.preview(request.query.token),
    }),
  );

  routes.push(
    route({
      method: "POST",
      url: "/v1/org/invites/accept",
      operationId: "acceptOrgInvite",
      tags,
      summary:
        "Accept as the invited e-mail's account (else 403); expired, withdrawn or used invitations are 409. leave_current=true leaves the current organization first (its owner gets 409).",
      summaryKo: "초대 수락(초대받은 이메일의 계정). leave_current=true면 지금 조직을 먼저 나갑니다(소유자는 409).",
      auth: account,
      errors: ["not_found", "forbidden_role", "conflict"],
      body: Body({
        token: Type.String({ minLength: 1, maxLength: 200 }),
        leave_current: Type.Optional(Type.Boolean({ default: false })),
      }),
      response: {
        200: Type.Object({
          org: Org,
          left: Nullable(
            Type.Object(
              { org_id: Type.String(), assets_handed_over: Type.Integer() },
              { description: "the organization left on the way (leave_current), or null" },
            ),
          ),
        }),
      },
      handler: async (request) => {
        const res = await svc.accept(callerOf(request), request.body.token, request.body.leave_current ?? false);
        return { org: orgView(res), left: res.left };
      },
    }),
  );

  routes.push(
    route({
      method: "DELETE",
      url: "/v1/org/invites/:id",
      operationId: "withdrawOrgInvite",
      tags,
      summary: "Withdraw a pending invitation (admin); its link stops working. Decided ones are 409.",
      summaryKo: "대기 중인 초대를 철회합니다(관리자).",
      auth: write,
      orgRole: "admin",
      errors: ["conflict"],
      params: IdParams,
      response: { 200: Invite },
      handler: async (request) => inviteView(await svc.withdraw(callerOf(request), orgOf(request), request.params.id)),
    }),
  );

  memberRoutes(app, memberAdminService(deps));
  registerRoutes(app, routes);
}
