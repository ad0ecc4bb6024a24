import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { Body, Nullable, Timestamp } from "../http/schemas.js";
import { callerOf } from "../auth/principal.js";
import { MIN_PASSWORD_LENGTH, type AccountsService } from "./service.js";
import { registerRoutes, route, type Route } from "../http/route.js";
import { noContentAfter } from "../http/no-content.js";

const Email = Type.String({ format: "email", maxLength: 254 });
const Password = Type.String({ minLength: MIN_PASSWORD_LENGTH, maxLength: 200 });

/**
 * Sign-in (/v1/auth, named in the spec only in prose) and token self-inspection: the accounts area's, since they
 * create and sign into accounts; src/auth keeps only the machinery (tokens, scopes, secrets, the principal).
 */
export async function signInRoutes(app: FastifyInstance, accounts: AccountsService) {
  const routes: Route[] = [];

  routes.push(
    route({
      method: "POST",
      url: "/v1/auth/signup",
      operationId: "signup",
      tags: ["auth"],
      summary: "Create an account with e-mail and password; returns a full-access token.",
      summaryKo: "이메일과 비밀번호로 가입하고 전체 권한 토큰을 받습니다.",
      auth: { public: true },
      errors: ["email_taken", "signup_closed"],
      body: Body({ email: Email, password: Password }),
      response: {
        201: Type.Object({ account: Type.Object({ id: Type.String(), email: Type.String() }), token: Type.String() }),
      },
      handler: async (request, reply) => {
        const { account, token } = await accounts.signup(request.body);
        return reply.code(201).send({ account: { id: account.id, email: account.email }, token });
      },
    }),
  );

  routes.push(
    route({
      method: "POST",
      url: "/v1/auth/login",
      operationId: "login",
      tags: ["auth"],
      summary: "Sign in; returns a new full-access token.",
      summaryKo: "이메일과 비밀번호로 로그인하고 새 토큰을 받습니다.",
      auth: { public: true },
      errors: ["invalid_credentials"],
      body: Body({ email: Email, password: Type.String({ minLength: 1, maxLength: 200 }) }),
      response: { 200: Type.Object({ token: Type.String() }) },
      handler: async (request) => ({ token: await accounts.login(request.body.email, request.body.password) }),
    }),
  );

  routes.push(
    route({
      method: "POST",
      url: "/v1/auth/logout",
      operationId: "logout",
      tags: ["auth"],
      summary: "Revoke the calling token.",
      summaryKo: "호출한 토큰을 폐기합니다.",
      auth: { account: true },
      response: { 204: Type.Null() },
      handler: async (request, reply) => noContentAfter(reply, accounts.logout(callerOf(request))),
    }),
  );

  routes.push(
    route({
      method: "GET",
      url: "/v1/token",
      operationId: "getToken",
      tags: ["auth"],
      summary: "Inspect the calling token: kind, scopes, expiry and account (never the secret).",
      summaryKo: "호출한 토큰의 종류, 범위, 만료, 계정을 보여 줍니다(비밀 값은 제외).",
      auth: { token: true },
      response: {
        200: Type.Object({
          id: Type.String(),
          kind: Type.Union([Type.Literal("full"), Type.Literal("scoped")]),
          scopes: Type.Array(Type.String()),
          expires_at: Nullable(Timestamp),
          account_id: Type.String(),
        }),
      },
      handler: async (request) => {
        const p = callerOf(request);
        return {
          id: p.tokenId,
          kind: p.kind,
          scopes: p.kind === "full" ? ["*"] : p.scopes,
          expires_at: p.expiresAt?.toISOString() ?? null,
          account_id: p.accountId,
        };
      },
    }),
  );
  registerRoutes(app, routes);
}
