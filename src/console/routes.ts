import { randomBytes } from "node:crypto";
import { Type } from "@sinclair/typebox";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { AppContext } from "../kernel/context.js";
import { Body } from "../http/schemas.js";
import { ApiError, type ErrorCode } from "../http/errors.js";
import { CSRF_COOKIE, csrfCookie, csrfSatisfied, readCookies, setSessionCookies } from "../http/session-cookie.js";
import { accountsService, MIN_PASSWORD_LENGTH } from "../accounts/public.js";
import { consoleHeaders, CONSOLE_PAGES } from "./headers.js";
import { checkoutSources } from "../billing/public.js";
import type { ConsoleState } from "./assets.js";
import { route, type Route } from "../http/route.js";

const Email = Type.String({ format: "email", maxLength: 254 });
const NOT_BUILT = `<!doctype html><meta charset="utf-8"><title>Console not built</title>
<p>The web console has not been built. Run <code>npm run console:build</code> (npm start does it when it is missing).</p>`;

const newCsrf = () => randomBytes(24).toString("base64url");

/**
 * The web console: its page and hashed assets at /, and the cookie session it signs in with. None of these are
 * API operations (hidden from /v1/openapi.json and the route table); the console reads and changes everything
 * through the public /v1 API with the SDK, the session cookie standing in for the bearer token.
 */
export function consoleRoutes(ctx: AppContext, state: ConsoleState): Route[] {
  const accounts = accountsService(ctx.db, ctx.config, ctx.tokens);
  // the CSP allows the checkout scripts of the payment providers configured, and nothing else
  const CONSOLE_HEADERS = consoleHeaders(checkoutSources(ctx.config.payments));
  // not API operations: hidden, and without tags, so their audit rows name no resource kind (as before the helper)
  const hidden = { tags: [] as string[], hide: true, auth: { public: true } as const, response: {} };

  const sendPage = async (request: FastifyRequest, reply: FastifyReply) => {
    const assets = await state.assets();
    reply.headers(CONSOLE_HEADERS).header("cache-control", "no-cache");
    // a visitor gets its CSRF cookie with the page, so even sign-in carries the double-submit proof
    if (!readCookies(request).get(CSRF_COOKIE)) reply.header("set-cookie", csrfCookie(request, newCsrf()));
    if (!assets) return reply.code(503).type("text/html; charset=utf-8").send(NOT_BUILT);
    return reply.type(assets.index.type).send(assets.index.body);
  };
  const pages = CONSOLE_PAGES.map((url) =>
    route({
      ...hidden,
      method: "GET",
      url,
      summary: "The console's page (one for every client-side route).",
      handler: sendPage,
    }),
  );

  const requireCsrf = async (request: FastifyRequest) => {
    if (!csrfSatisfied(request))
      throw new ApiError(
        "invalid_request",
        "header X-Platform-CSRF is missing or does not repeat the platform_csrf cookie; reload the console.",
      );
  };
  const startSession = (request: FastifyRequest, reply: FastifyReply, token: string) => {
    setSessionCookies(request, reply, {
      token,
      csrf: newCsrf(),
      maxAgeSeconds: ctx.config.sessionTtlDays * 86_400,
    });
    return reply.code(204).send(null);
  };
  const session = {
    ...hidden,
    errors: ["invalid_credentials", "email_taken", "signup_closed"] as ErrorCode[],
    options: { preHandler: requireCsrf },
  };

  return [
    ...pages,
    route({
      ...hidden,
      method: "GET",
      url: "/assets/:file",
      summary: "A hashed console asset, cached for a year.",
      handler: async (request, reply) => {
        const asset = (await state.assets())?.hashed.get((request.params as { file: string }).file);
        if (!asset) return reply.code(404).headers(CONSOLE_HEADERS).type("text/plain").send("not found");
        reply.headers(CONSOLE_HEADERS).header("cache-control", "public, max-age=31536000, immutable");
        return reply.type(asset.type).send(asset.body);
      },
    }),
    route({
      ...hidden,
      method: "GET",
      url: "/favicon.svg",
      summary: "The console's icon.",
      handler: async (_request, reply) => {
        const asset = (await state.assets())?.root.get("favicon.svg");
        if (!asset) return reply.code(404).type("text/plain").send("not found");
        return reply
          .headers(CONSOLE_HEADERS)
          .header("cache-control", "public, max-age=86400")
          .type(asset.type)
          .send(asset.body);
      },
    }),
    route({
      ...session,
      method: "POST",
      url: "/console/session",
      summary: "Sign in: the session and CSRF cookies.",
      body: Body({ email: Email, password: Type.String({ minLength: 1, maxLength: 200 }) }),
      handler: async (request, reply) =>
        startSession(request, reply, await accounts.login(request.body.email, request.body.password)),
    }),
    route({
      ...session,
      method: "POST",
      url: "/console/signup",
      summary: "Sign up, then signed in with the session and CSRF cookies.",
      body: Body({ email: Email, password: Type.String({ minLength: MIN_PASSWORD_LENGTH, maxLength: 200 }) }),
      handler: async (request, reply) => startSession(request, reply, (await accounts.signup(request.body)).token),
    }),
    // the console revokes its token with POST /v1/auth/logout first; this only forgets the cookies
    route({
      ...session,
      method: "POST",
      url: "/console/signout",
      summary: "Forget the session cookies (a fresh CSRF cookie stays).",
      handler: async (request, reply) => {
        setSessionCookies(request, reply, null);
        reply.header("set-cookie", [...(reply.getHeader("set-cookie") as string[]), csrfCookie(request, newCsrf())]);
        return reply.code(204).send(null);
      },
    }),
  ];
}
