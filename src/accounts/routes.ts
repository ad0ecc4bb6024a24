import { Type } from "@sinclair/typebox";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { FastifyInstance } from "fastify";
import type { AppContext } from "../kernel/context.js";
import { badRequest, notFound } from "../http/errors.js";
import { Body, Nullable, PageQuery, Timestamp } from "../http/schemas.js";
import { accountsService, MIN_PASSWORD_LENGTH } from "./service.js";
import * as repo from "./repo.js";
import type { AccountSnapshot } from "../auth/principal.js";
import { listAudit } from "../audit/list.js";

const Me = Type.Object({
  id: Type.String(),
  email: Type.String(),
  display_name: Nullable(Type.String()),
  locale: Type.Union([Type.Literal("ko"), Type.Literal("en")]),
  has_password: Type.Boolean(),
  created_at: Timestamp,
  account_spend_cap_krw: Type.Integer(),
  account_spend_cap_is_default: Type.Boolean(),
  app_spend_cap_krw: Type.Integer(),
  app_spend_cap_is_default: Type.Boolean(),
});

const SpendCaps = Type.Object({
  account_spend_cap_krw: Type.Integer(),
  account_spend_cap_is_default: Type.Boolean(),
  app_spend_cap_krw: Type.Integer(),
  app_spend_cap_is_default: Type.Boolean(),
});

const ApiKey = Type.Object({
  id: Type.String(),
  name: Type.String(),
  prefix: Type.String({ description: "first characters of the key, to recognise it" }),
  scopes: Type.Array(Type.String()),
  expires_at: Nullable(Timestamp),
  last_used_at: Nullable(Timestamp),
  created_at: Timestamp,
});

const keyView = (t: repo.TokenRow) => ({
  id: t.id, name: t.name, prefix: t.display_prefix, scopes: t.scopes,
  expires_at: t.expires_at?.toISOString() ?? null, last_used_at: t.last_used_at?.toISOString() ?? null, created_at: t.created_at.toISOString(),
});

const CapBody = Body({ amount_krw: Type.Integer({ minimum: 0, maximum: 1_000_000_000_000, description: "KRW per month; 0 restores the platform default" }) });

/** Account endpoints: full-access tokens only (spec: Account). */
export async function accountRoutes(app: FastifyInstance, ctx: AppContext) {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const accounts = accountsService(ctx.db, ctx.config, ctx.tokens);
  const account = { account: true } as const;

  const meView = (a: AccountSnapshot) => ({
    id: a.id, email: a.email, display_name: a.display_name, locale: a.locale, has_password: a.has_password,
    created_at: a.created_at.toISOString(), ...accounts.spendCaps(a),
  });
  const snapshot = (a: repo.AccountRow): AccountSnapshot => ({
    id: a.id, email: a.email, display_name: a.display_name, locale: a.locale, has_password: a.password_hash !== null,
    account_spend_cap_krw: a.account_spend_cap_krw, app_spend_cap_krw: a.app_spend_cap_krw, created_at: a.created_at,
  });

  r.get("/v1/me", {
    config: { auth: account, summaryKo: "계정 정보." },
    schema: { operationId: "getMe", tags: ["account"], summary: "Account info.", response: { 200: Me } },
  }, async (request) => meView(request.principal!.account));

  r.patch("/v1/me", {
    config: { auth: account, summaryKo: "표시 이름과 언어(ko, en)를 바꿉니다." },
    schema: {
      operationId: "updateMe", tags: ["account"], summary: "Change display_name and locale (ko or en).",
      body: Body({
        display_name: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 100 }))),
        locale: Type.Optional(Type.Union([Type.Literal("ko"), Type.Literal("en")])),
      }),
      response: { 200: Me },
    },
  }, async (request) => {
    const { display_name, locale } = request.body;
    if (display_name === undefined && locale === undefined) throw badRequest("invalid_request", "Send display_name or locale.");
    const updated = await accounts.updateProfile(request.principal!.accountId, {
      ...(display_name !== undefined ? { display_name } : {}),
      ...(locale !== undefined ? { locale } : {}),
    });
    return meView(snapshot(updated));
  });

  // the two caps differ only in what they limit
  const caps = [
    {
      url: "/v1/me/account-spend-cap", column: "account_spend_cap_krw", operationId: "setAccountSpendCap",
      summary: "Monthly hard cap in KRW across all pods; on reaching it only autoscaling and machine growth stop. 0 restores the platform default (not unlimited).",
      summaryKo: "모든 앱을 합친 월 지출 상한(원). 0이면 플랫폼 기본값으로 돌아갑니다.",
    },
    {
      url: "/v1/me/app-spend-cap", column: "app_spend_cap_krw", operationId: "setAppSpendCap",
      summary: "Account default monthly spend limit per app, KRW; 0 restores the platform default.",
      summaryKo: "앱 하나당 기본 월 지출 상한(원). 0이면 플랫폼 기본값.",
    },
  ] as const;
  for (const cap of caps) {
    r.put(cap.url, {
      config: { auth: account, summaryKo: cap.summaryKo },
      schema: { operationId: cap.operationId, tags: ["account"], summary: cap.summary, body: CapBody, response: { 200: SpendCaps } },
    }, async (request) => accounts.setSpendCap(request.principal!.accountId, cap.column, request.body.amount_krw));
  }

  r.get("/v1/me/audit", {
    config: { auth: account, summaryKo: "계정의 모든 변경 요청 기록(커서 페이지)." },
    schema: {
      operationId: "listMyAudit", tags: ["account"], summary: "Own activity log: every mutating request, newest first; ?limit=&cursor=.",
      querystring: PageQuery,
      response: {
        200: Type.Object({
          items: Type.Array(Type.Object({
            id: Type.String(), actor: Type.String(), token_id: Nullable(Type.String()), token_kind: Nullable(Type.String()),
            action: Type.String(), target: Nullable(Type.String()), ip: Nullable(Type.String()), status: Type.Integer(), request_id: Nullable(Type.String()), created_at: Timestamp,
          })),
          next_cursor: Nullable(Type.String()),
        }),
      },
    },
  }, async (request) => listAudit(ctx.db, request.principal!.accountId, request.query.limit ?? 50, request.query.cursor));

  r.post("/v1/me/delete", {
    config: { auth: account, summaryKo: "계정을 삭제합니다. 모든 토큰이 폐기되고 다시 로그인할 수 없습니다." },
    schema: { operationId: "deleteMe", tags: ["account"], summary: "Delete the account: every token is revoked and sign-in stops working.", response: { 204: Type.Null() } },
  }, async (request, reply) => {
    await accounts.deleteAccount(request.principal!.accountId);
    return reply.code(204).send(null);
  });

  r.post("/v1/me/password", {
    config: { auth: account, summaryKo: "비밀번호를 설정하거나 바꿉니다. 다른 로그인 세션은 끝납니다." },
    schema: {
      operationId: "setPassword", tags: ["account"],
      summary: "Set or change the password (current_password required when one is set); other sign-in sessions end.",
      body: Body({ current_password: Type.Optional(Type.String({ maxLength: 200 })), new_password: Type.String({ minLength: MIN_PASSWORD_LENGTH, maxLength: 200 }) }),
      response: { 204: Type.Null() },
    },
  }, async (request, reply) => {
    await accounts.changePassword(request.principal!.accountId, request.principal!.tokenId, request.body.current_password, request.body.new_password);
    return reply.code(204).send(null);
  });

  r.get("/v1/api-keys", {
    config: { auth: account, summaryKo: "범위 제한 API 키 목록." },
    schema: { operationId: "listApiKeys", tags: ["account"], summary: "List scoped API keys (never their secrets).", response: { 200: Type.Array(ApiKey) } },
  }, async (request) => {
    return (await repo.listScopedKeys(ctx.db, request.principal!.accountId)).map(keyView);
  });

  r.post("/v1/api-keys", {
    config: { auth: account, summaryKo: "범위 제한 키를 발급합니다. 키 값은 이때 한 번만 보입니다." },
    schema: {
      operationId: "createApiKey", tags: ["account"],
      summary: "Issue a scoped key (opk_…) with scopes and optional expiry; the key is shown once.",
      body: Body({
        name: Type.String({ minLength: 1, maxLength: 100 }),
        scopes: Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { minItems: 1, maxItems: 100 }),
        // format date-time demands a zone: a zoneless time would otherwise be read in the server's local time
        expires_at: Type.Optional(Type.String({ format: "date-time", maxLength: 64, description: "RFC 3339 time" })),
      }),
      response: { 201: Type.Composite([ApiKey, Type.Object({ key: Type.String({ description: "the secret, shown only now" }) })]) },
    },
  }, async (request, reply) => {
    const { row, secret } = await accounts.issueScopedKey(request.principal!.accountId, request.body);
    return reply.code(201).send({ ...keyView(row), key: secret });
  });

  r.delete("/v1/api-keys/:id", {
    config: { auth: account, summaryKo: "키를 폐기합니다. 모든 API 프로세스에서 즉시 거부됩니다." },
    schema: {
      operationId: "revokeApiKey", tags: ["account"], summary: "Revoke a key; every API process refuses it at once.",
      params: Type.Object({ id: Type.String({ format: "uuid" }) }), response: { 204: Type.Null() },
    },
  }, async (request, reply) => {
    if (!(await accounts.revoke(request.principal!.accountId, request.params.id, true))) throw notFound("API key");
    return reply.code(204).send(null);
  });
}
