import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import type { AppContext } from "../kernel/context.js";
import { Body, Nullable, PageQuery } from "../http/schemas.js";
import { callerOf, type AccountSnapshot } from "../auth/principal.js";
import { listOwnAudit } from "../audit/service.js";
import { MIN_PASSWORD_LENGTH, type AccountsService } from "./service.js";
import { AuditPage, CapBody, Me, SpendCaps } from "./schemas.js";
import { registerRoutes, route, type Route } from "../http/route.js";
import { noContentAfter } from "../http/no-content.js";

/** Account endpoints under /v1/me: full-access tokens only (spec: Account). */
export async function meRoutes(app: FastifyInstance, ctx: AppContext, accounts: AccountsService) {
  const routes: Route[] = [];
  const account = { account: true } as const;

  const meView = (a: AccountSnapshot) => ({
    id: a.id,
    email: a.email,
    display_name: a.display_name,
    locale: a.locale,
    has_password: a.has_password,
    created_at: a.created_at.toISOString(),
    ...accounts.spendCaps(a),
  });

  routes.push(
    route({
      method: "GET",
      url: "/v1/me",
      operationId: "getMe",
      tags: ["account"],
      summary: "Account info.",
      summaryKo: "계정 정보.",
      auth: account,
      response: { 200: Me },
      handler: async (request) => meView(callerOf(request).account),
    }),
  );

  routes.push(
    route({
      method: "PATCH",
      url: "/v1/me",
      operationId: "updateMe",
      tags: ["account"],
      summary: "Change display_name and locale (ko or en).",
      summaryKo: "표시 이름과 언어(ko, en)를 바꿉니다.",
      auth: account,
      errors: ["not_found"],
      body: Body({
        display_name: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 100 }))),
        locale: Type.Optional(Type.Union([Type.Literal("ko"), Type.Literal("en")])),
      }),
      response: { 200: Me },
      handler: async (request) => meView(await accounts.updateProfile(callerOf(request), request.body)),
    }),
  );

  // the two caps differ only in what they limit
  const caps = [
    {
      url: "/v1/me/account-spend-cap",
      column: "account_spend_cap_krw",
      operationId: "setAccountSpendCap",
      summary:
        "Monthly hard cap in KRW across all pods; on reaching it only autoscaling and machine growth stop. 0 restores the platform default (not unlimited).",
      summaryKo: "모든 앱을 합친 월 지출 상한(원). 0이면 플랫폼 기본값으로 돌아갑니다.",
    },
    {
      url: "/v1/me/app-spend-cap",
      column: "app_spend_cap_krw",
      operationId: "setAppSpendCap",
      summary: "Account default monthly spend limit per app, KRW; 0 restores the platform default.",
      summaryKo: "앱 하나당 기본 월 지출 상한(원). 0이면 플랫폼 기본값.",
    },
  ] as const;
  for (const cap of caps) {
    routes.push(
      route({
        method: "PUT",
        url: cap.url,
        operationId: cap.operationId,
        tags: ["account"],
        summary: cap.summary,
        summaryKo: cap.summaryKo,
        auth: account,
        errors: ["not_found"],
        body: CapBody,
        response: { 200: SpendCaps },
        handler: async (request) => accounts.setSpendCap(callerOf(request), cap.column, request.body.amount_krw),
      }),
    );
  }

  routes.push(
    route({
      method: "GET",
      url: "/v1/me/audit",
      operationId: "listMyAudit",
      tags: ["account"],
      summary: "Own activity log: every mutating request, newest first; ?limit=&cursor=.",
      summaryKo: "계정의 모든 변경 요청 기록(커서 페이지).",
      auth: account,
      query: PageQuery,
      response: { 200: AuditPage },
      handler: async (request) =>
        listOwnAudit(ctx.db, callerOf(request), request.query.limit ?? 50, request.query.cursor),
    }),
  );

  routes.push(
    route({
      method: "POST",
      url: "/v1/me/delete",
      operationId: "deleteMe",
      tags: ["account"],
      summary: "Delete the account: every token is revoked and sign-in stops working.",
      summaryKo: "계정을 삭제합니다. 모든 토큰이 폐기되고 다시 로그인할 수 없습니다.",
      auth: account,
      response: { 204: Type.Null() },
      handler: async (request, reply) => noContentAfter(reply, accounts.deleteAccount(callerOf(request))),
    }),
  );

  routes.push(
    route({
      method: "POST",
      url: "/v1/me/password",
      operationId: "setPassword",
      tags: ["account"],
      summary: "Set or change the password (current_password required when one is set); other sign-in sessions end.",
      summaryKo: "비밀번호를 설정하거나 바꿉니다. 다른 로그인 세션은 끝납니다.",
      auth: account,
      errors: ["current_password_required", "wrong_password", "not_found"],
      body: Body({
        current_password: Type.Optional(Type.String({ maxLength: 200 })),
        new_password: Type.String({ minLength: MIN_PASSWORD_LENGTH, maxLength: 200 }),
      }),
      response: { 204: Type.Null() },
      handler: async (request, reply) =>
        noContentAfter(
          reply,
          accounts.changePassword(callerOf(request), request.body.current_password, request.body.new_password),
        ),
    }),
  );
  registerRoutes(app, routes);
}
