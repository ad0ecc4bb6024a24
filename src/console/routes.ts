import { randomBytes } from "node:crypto";
import { Type } from "@sinclair/typebox";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { AppContext } from "../kernel/context.js";
import { Body } from "../http/schemas.js";
import { ApiError } from "../http/errors.js";
import { CSRF_COOKIE, csrfCookie, csrfSatisfied, readCookies, setSessionCookies } from "../http/session-cookie.js";
import { accountsService, MIN_PASSWORD_LENGTH } from "../accounts/public.js";
import { consoleHeaders, CONSOLE_PAGES } from "./headers.js";
import { checkoutSources } from "../billing/public.js";
import type { ConsoleState } from "./assets.js";

const Email = Type.String({ format: "email", maxLength: 254 });
const NOT_BUILT = `<!doctype html><meta charset="utf-8"><title>Console not built</title>
<p>The web console has not been built. Run <code>npm run console:build</code> (npm start does it when it is missing).</p>`;

const newCsrf = () => randomBytes(24).toString("base64url");

/**
 * The web console: its page and hashed assets at /, and the cookie session it signs in with. None of these are
 * API operations (hidden from /v1/openapi.json and the route table); the console reads and changes everything
 * through the public /v1 API with the SDK, the session cookie standing in for the bearer token.
 */
export async function consoleRoutes(app: FastifyInstance, ctx: AppContext, state: ConsoleState) {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const accounts = accountsService(ctx.db, ctx.config, ctx.tokens);
  const hidden = { hide: true } as const;
  // the CSP allows the checkout scripts of the payment providers configured, and nothing else
  const CONSOLE_HEADERS = consoleHeaders(checkoutSources(ctx.config.payments));
  const page = { config: { auth: { public: true } as const, errors: [] }, schema: hidden };

  const sendPage = async (request: FastifyRequest, reply: FastifyReply) => {
    const assets = await state.assets();
    reply.headers(CONSOLE_HEADERS).header("cache-control", "no-cache");
    // a visitor gets its CSRF cookie with the page, so even sign-in carries the double-submit proof
    if (!readCookies(request).get(CSRF_COOKIE)) reply.header("set-cookie", csrfCookie(request, newCsrf()));
    if (!assets) return reply.code(503).type("text/html; charset=utf-8").send(NOT_BUILT);
    return reply.type(assets.index.type).send(assets.index.body);
  };
  for (const url of CONSOLE_PAGES) r.get(url, page, sendPage);

  r.get<{ Params: { file: string } }>("/assets/:file", page, async (request, reply) => {
    const asset = (await state.assets())?.hashed.get(request.params.file);
    if (!asset) return reply.code(404).headers(CONSOLE_HEADERS).type("text/plain").send("not found");
    reply.headers(CONSOLE_HEADERS).header("cache-control", "public, max-age=31536000, immutable");
    return reply.type(asset.type).send(asset.body);
  });
  r.get("/favicon.svg", page, async (_request, reply) => {
    const asset = (await state.assets())?.root.get("favicon.svg");
    if (!asset) return reply.code(404).type("text/plain").send("not found");
    return reply
      .headers(CONSOLE_HEADERS)
      .header("cache-control", "public, max-age=86400")
      .type(asset.type)
      .send(asset.body);
  });

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
    auth: { public: true } as const,
    errors: ["invalid_credentials", "email_taken", "signup_closed", "invalid_request"] as never[],
  };

  r.post(
    "/console/session",
    {
      config: session,
      preHandler: requireCsrf,
      schema: { ...hidden, body: Body({ email: Email, password: Type.String({ minLength: 1, maxLength: 200 }) }) },
    },
    async (request, reply) =>
      startSession(request, reply, await accounts.login(request.body.email, request.body.password)),
  );

  r.post(
    "/console/signup",
    {
      config: session,
      preHandler: requireCsrf,
      schema: {
        ...hidden,
        body: Body({ email: Email, password: Type.String({ minLength: MIN_PASSWORD_LENGTH, maxLength: 200 }) }),
      },
    },
    async (request, reply) => startSession(request, reply, (await accounts.signup(request.body)).token),
  );

  // the console revokes its token with POST /v1/auth/logout first; this only forgets the cookies
  r.post("/console/signout", { config: session, preHandler: requireCsrf, schema: hidden }, async (request, reply) => {
    setSessionCookies(request, reply, null);
    reply.header("set-cookie", [...(reply.getHeader("set-cookie") as string[]), csrfCookie(request, newCsrf())]);
    return reply.code(204).send(null);
  });
}
