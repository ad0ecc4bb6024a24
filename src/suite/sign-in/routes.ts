import { Type } from "@sinclair/typebox";
import type { FastifyReply, FastifyRequest } from "fastify";
import { randomBytes } from "node:crypto";
import { callerOf } from "../../auth/principal.js";
import { Body, Nullable } from "../../http/schemas.js";
import { ApiError } from "../../http/errors.js";
import { csrfSatisfied, flowCookie, readCookies, setSessionCookies } from "../../http/session-cookie.js";
import { route, type Route } from "../../http/route.js";
import type { AppContext } from "../../kernel/context.js";
import { orgOf } from "../../orgs/public.js";
import { suiteOf } from "../state.js";
import { withQuery, type SignInService } from "./service.js";

const tags = ["suite"];
const NOTICES = ["suite_setup_pending", "suite_join_department", "suite_join_invite", "suite_not_linked"] as const;
const Code = Type.String({ minLength: 10, maxLength: 200 });
const Session = Type.Object({
  token: Type.String({ description: "a sign-in session token (op_u_...), as POST /v1/auth/login gives" }),
  account: Type.Object({ id: Type.String(), email: Type.String() }),
  org_id: Type.String(),
  setup_pending: Type.Boolean({ description: "the suite setup wizard is not finished (staff sign-in is held)" }),
  role: Nullable(Type.String()),
});
const Link = Type.Object({
  company_id: Type.String(),
  issuer: Type.String(),
  setup_done: Type.Boolean(),
  setup_done_at: Nullable(Type.String()),
  join_policy: Type.String({ description: "all | departments | invite" }),
  join_units: Type.Array(Type.String(), { description: "the chosen suite units (policy departments)" }),
  stop_on_exhausted: Type.Boolean(),
  billing_mode: Type.String(),
});
const Policy = Type.Union([Type.Literal("all"), Type.Literal("departments"), Type.Literal("invite")]);
const JoinPolicy = Type.Object({ policy: Policy, departments: Type.Array(Type.String()) });

/** The cookie binding a sign-in to the browser that started it (login CSRF; service.ts `start`). */
const BROWSER_COOKIE = "platform_suite_sign_in";
const wantsJson = (request: FastifyRequest) => /application\/json/.test(request.headers.accept ?? "");

/** Sign-in with the suite (public) and the organization's suite settings (admins): README.md here, "Sign-in". */
export function signInRoutes(ctx: AppContext, svc: SignInService): Route[] {
  const read = { scope: "org:read" } as const;
  const write = { scope: "org:write" } as const;
  const notLinked = ["not_found", "suite_not_configured"] as const;

  const callback = async (request: FastifyRequest, reply: FastifyReply) => {
    const callbackUrl = new URL(suiteOf(ctx).redirectUrl);
    callbackUrl.search = new URL(request.url, "http://platform.invalid").search;
    const outcome = await svc.callback(request.query as Record<string, string | undefined>, callbackUrl, {
      ip: request.ip,
      requestId: request.id,
    });
    if (outcome.kind === "code") {
      if (wantsJson(request)) return { code: outcome.code, return_to: outcome.returnTo };
      return reply
        .code(302)
        .header("location", withQuery(outcome.returnTo, { suite_code: outcome.code }))
        .send();
    }
    if (wantsJson(request)) throw outcome.error;
    return reply
      .code(302)
      .header("location", withQuery(outcome.returnTo, { notice: outcome.error.code }))
      .send();
  };

  return [
    route({
      method: "GET",
      url: "/v1/auth/suite",
      operationId: "getSuiteSignIn",
      tags,
      summary: "Whether this platform offers sign-in with the suite, and the suite's issuer (the console's button).",
      summaryKo: "스위트 로그인 제공 여부와 발급자.",
      auth: { public: true },
      response: { 200: Type.Object({ enabled: Type.Boolean(), issuer: Nullable(Type.String()) }) },
      handler: async () => svc.enabled(),
    }),
    route({
      method: "GET",
      url: "/v1/auth/suite/start",
      operationId: "startSuiteSignIn",
      tags,
      summary:
        "Start a suite sign-in: 302 to the suite (with Accept: application/json, the address as JSON). return_to: a path of this platform or a loopback address (the CLI).",
      summaryKo: "스위트 로그인을 시작합니다(스위트로 302).",
      auth: { public: true },
      errors: ["suite_not_configured", "suite_unavailable"],
      query: Type.Object({ return_to: Type.Optional(Type.String({ maxLength: 2000 })) }),
      response: {
        200: Type.Object({ authorization_url: Type.String() }),
        302: Type.Null({ description: "to the suite's authorization page" }),
      },
      handler: async (request, reply) => {
        const { url, browser } = await svc.start(request.query.return_to);
        if (browser !== null) reply.header("set-cookie", flowCookie(request, BROWSER_COOKIE, browser, 600));
        if (wantsJson(request)) return { authorization_url: url };
        return reply.code(302).header("location", url).send();
      },
    }),
    route({
      method: "GET",
      url: "/v1/auth/suite/callback",
      operationId: "finishSuiteSignIn",
      tags,
      summary:
        "Where the suite sends the browser back: 302 to return_to with suite_code (or to the sign-in page with notice); with Accept: application/json the same as JSON.",
      summaryKo: "스위트 로그인 콜백: 일회용 코드와 함께 돌아갈 곳으로 302.",
      auth: { public: true },
      errors: ["suite_sign_in_failed", "suite_not_configured", "suite_unavailable", "conflict", ...NOTICES],
      query: Type.Object({
        code: Type.Optional(Type.String({ maxLength: 4000 })),
        state: Type.Optional(Type.String({ maxLength: 400 })),
        error: Type.Optional(Type.String({ maxLength: 200 })),
        error_description: Type.Optional(Type.String({ maxLength: 2000 })),
      }),
      response: {
        200: Type.Object({ code: Type.String(), return_to: Type.String() }),
        302: Type.Null({ description: "to return_to with suite_code, or to the sign-in page with notice" }),
      },
      handler: callback,
    }),
    route({
      method: "POST",
      url: "/v1/auth/suite/exchange",
      operationId: "exchangeSuiteCode",
      tags,
      summary: "Exchange the one-time suite_code (2 minutes, single use) for a sign-in session token.",
      summaryKo: "일회용 suite_code를 로그인 토큰으로 바꿉니다.",
      auth: { public: true },
      errors: ["suite_sign_in_failed"],
      body: Body({ code: Code }),
      response: { 200: Session },
      handler: async (request) => svc.exchange(request.body.code),
    }),
    route({
      method: "POST",
      url: "/v1/auth/suite/recover",
      operationId: "recoverSuiteOwner",
      tags,
      summary:
        "The owner's way in when the suite cannot sign them in: the one-time recovery code from POST /v1/org/suite/recovery-code.",
      summaryKo: "스위트 로그인이 안 될 때 소유자의 복구 코드 로그인(일회용).",
      auth: { public: true },
      errors: ["invalid_credentials"],
      body: Body({ email: Type.String({ minLength: 3, maxLength: 254 }), code: Code }),
      response: { 200: Session },
      handler: async (request) => svc.recover(request.body.email, request.body.code),
    }),
    route({
      method: "GET",
      url: "/v1/org/suite",
      operationId: "getOrgSuite",
      tags,
      summary: "The organization's suite link: company, setup state, join policy, billing options (admin).",
      summaryKo: "조직의 스위트 연결: 회사, 설정 상태, 가입 정책, 과금 옵션.",
      auth: read,
      orgRole: "admin",
      errors: [...notLinked],
      response: { 200: Link },
      handler: async (request) => svc.link(orgOf(request)),
    }),
    route({
      method: "GET",
      url: "/v1/org/suite/join-policy",
      operationId: "getSuiteJoinPolicy",
      tags,
      summary: "Who joins by suite sign-in alone: all, departments (chosen suite units and below) or invite.",
      summaryKo: "스위트 로그인만으로 가입할 수 있는 사람(all, departments, invite).",
      auth: read,
      orgRole: "admin",
      errors: [...notLinked],
      response: { 200: JoinPolicy },
      handler: async (request) => svc.joinPolicy(orgOf(request)),
    }),
    route({
      method: "PUT",
      url: "/v1/org/suite/join-policy",
      operationId: "setSuiteJoinPolicy",
      tags,
      summary: "Set the join policy; departments takes the suite unit ids (their descendants are included).",
      summaryKo: "가입 정책을 정합니다. departments에는 스위트 부서 id(하위 부서 포함).",
      auth: write,
      orgRole: "admin",
      errors: [...notLinked],
      body: Body({
        policy: Policy,
        departments: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { maxItems: 500 })),
      }),
      response: { 200: JoinPolicy },
      handler: async (request) =>
        svc.setJoinPolicy(callerOf(request), orgOf(request), request.body.policy, request.body.departments),
    }),
    route({
      method: "POST",
      url: "/v1/org/suite/setup/finish",
      operationId: "finishSuiteSetup",
      tags,
      summary: "Finish the suite setup wizard: from now on staff join by the join policy.",
      summaryKo: "스위트 설정 마법사를 마칩니다. 이제 직원이 가입 정책에 따라 들어옵니다.",
      auth: write,
      orgRole: "admin",
      errors: [...notLinked],
      response: { 200: Link },
      handler: async (request) => svc.finishSetup(callerOf(request), orgOf(request)),
    }),
    route({
      method: "POST",
      url: "/v1/org/suite/recovery-code",
      operationId: "newSuiteRecoveryCode",
      tags,
      summary:
        "A new one-time recovery code for the owner (shown once; replaces the previous one), for POST /v1/auth/suite/recover.",
      summaryKo: "소유자의 새 일회용 복구 코드(한 번만 보임, 이전 코드는 무효).",
      auth: { account: true },
      orgRole: "owner",
      errors: [...notLinked],
      response: { 200: Type.Object({ recovery_code: Type.String() }) },
      handler: async (request) => svc.newRecoveryCode(callerOf(request), orgOf(request)),
    }),
    // the console's landing: the code becomes the cookie session (like /console/session), never a URL's token
    route({
      method: "POST",
      url: "/console/suite-session",
      summary: "Exchange a suite_code for the console's session and CSRF cookies.",
      tags: [],
      hide: true,
      auth: { public: true },
      errors: ["suite_sign_in_failed"],
      body: Body({ code: Code }),
      response: {},
      options: {
        preHandler: async (request) => {
          if (!csrfSatisfied(request))
            throw new ApiError(
              "invalid_request",
              "header X-Platform-CSRF is missing or does not repeat the platform_csrf cookie; reload the console.",
            );
        },
      },
      handler: async (request, reply) => {
        // only a code of a sign-in this browser started: a code someone got for themselves cannot sign a victim in
        const session = await svc.exchange(request.body.code, readCookies(request).get(BROWSER_COOKIE) ?? null);
        setSessionCookies(request, reply, {
          token: session.token,
          csrf: randomBytes(24).toString("base64url"),
          maxAgeSeconds: ctx.config.sessionTtlDays * 86_400,
        });
        const { token: _token, ...rest } = session;
        void _token;
        return reply.code(200).send(rest);
      },
    }),
  ];
}
