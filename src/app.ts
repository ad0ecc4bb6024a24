import { randomUUID } from "node:crypto";
import Fastify, { type FastifyInstance, type onSendHookHandler, type preHandlerHookHandler, type preValidationHookHandler } from "fastify";
import swagger from "@fastify/swagger";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import "./http/types.js";
import { ErrorBodySchema, installErrorHandling } from "./http/error-handler.js";
import { installValidators } from "./http/validation.js";
import { authorize, identify, requireAuthDeclarations, type AuthDeps } from "./http/authenticate.js";
import { ApiError } from "./http/errors.js";
import { Idempotency } from "./http/idempotency.js";
import { rateLimitHeaders } from "./http/rate-limit.js";
import { TokenResolver } from "./auth/token-resolver.js";
import { auditDraft, recordRequestAudit } from "./audit/record.js";
import type { AppContext, Platform } from "./kernel/context.js";
import { collectRouteTable } from "./http/route-table.js";

export type App = FastifyInstance;

const MUTATING = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/** Builds the whole API over a platform (kernel/platform.ts); tests and main() both come through here. */
export async function buildApp(platform: Platform): Promise<FastifyInstance> {
  const { config, db } = platform;
  const app = Fastify({
    logger: { level: config.logLevel },
    genReqId: () => randomUUID(),
    requestIdHeader: false,
    bodyLimit: config.bodyLimitBytes,
    exposeHeadRoutes: false,
    trustProxy: false,
    return503OnClosing: true,
  }).withTypeProvider<TypeBoxTypeProvider>();

  const ctx: AppContext = {
    ...platform,
    tokens: new TokenResolver(db, platform.databaseUrl, app.log),
    routeTable: [],
  };
  await ctx.tokens.start();
  app.addHook("onClose", async () => ctx.tokens.close());

  installValidators(app);
  installErrorHandling(app);
  await app.register(swagger, {
    openapi: {
      openapi: "3.0.3",
      info: { title: "Hosting platform API", version: "1.0.0", description: "The platform's public REST API." },
      servers: [{ url: "/" }],
      components: {
        securitySchemes: {
          bearer: { type: "http", scheme: "bearer", description: "op_u_ full-access token or opk_ scoped key" },
        },
      },
    },
  });

  requireAuthDeclarations(app);
  ctx.routeTable = collectRouteTable(app);
  // every route documents the one error body for every failure status
  app.addHook("onRoute", (route) => {
    const schema = (route.schema ??= {}) as { response?: Record<string, unknown>; security?: unknown };
    schema.response ??= {};
    for (const status of ["400", "401", "402", "403", "404", "409", "412", "413", "415", "422", "429", "500", "501", "503"]) {
      schema.response[status] ??= { ...ErrorBodySchema, description: "Error" };
    }
    const auth = route.config?.auth;
    if (auth && !("public" in auth)) schema.security ??= [{ bearer: [] }];
  });

  const authDeps: AuthDeps = { tokens: ctx.tokens, kernel: platform.kernel, operatorToken: platform.operatorToken, fleetToken: config.fleetToken };
  const idempotency = new Idempotency(db, () => platform.kernel.hosts.leaseId());

  app.addHook("onRequest", async (request, reply) => {
    reply.header("x-request-id", request.id);
    await identify(request, authDeps);
    const successStatus = request.routeOptions.config.successStatus;
    // mutations carry their audit row with them, for the service's transaction (audit/record.ts)
    if (successStatus !== undefined && request.principal) request.principal = { ...request.principal, audit: auditDraft(request, successStatus) };
    // every caller is limited: an account across all its tokens, anyone else by client address
    const hit = await platform.rateLimit.hit(request.callerKey);
    reply.headers(rateLimitHeaders(config.rateLimitRps, hit));
    if (hit.count > config.rateLimitRps) {
      throw new ApiError("too_many_requests", `More than ${config.rateLimitRps} requests per second; slow down.`, {
        "retry-after": String(Math.max(1, Math.ceil(hit.resetMs / 1000))),
      });
    }
    await authorize(request, authDeps);
  });
  // during shutdown, answers to in-flight requests close their keep-alive connection, so close() can finish
  let closing = false;
  app.addHook("preClose", async () => { closing = true; });
  app.addHook("onSend", (_request, reply, payload, done) => {
    if (closing) reply.header("connection", "close");
    done(null, payload);
  });

  // hooks that only mutations need are attached to mutating routes, keeping reads on the short path
  const emptyBody: preValidationHookHandler = async (request) => {
    // a POST without a body is an empty object, so optional bodies need no special schema and required fields are named
    if (request.body === undefined) request.body = {};
  };
  const replayIdempotent: preHandlerHookHandler = async (request, reply) => {
    if (await idempotency.begin(request, reply)) return reply;
  };
  const storeAndAudit: onSendHookHandler = async (request, reply, payload) => {
    await idempotency.complete(request, reply, payload);
    // written before the answer leaves, so a client that reads its audit log next finds the row
    await recordRequestAudit(db, request, reply.statusCode);
    return payload;
  };
  app.addHook("onRoute", (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (!methods.some((m) => MUTATING.has(m))) return;
    const successes = Object.keys((route.schema as { response?: object } | undefined)?.response ?? {}).filter((k) => /^2\d\d$/.test(k));
    route.config = { ...route.config, successStatus: successes.length ? Math.min(...successes.map(Number)) : 200 };
    const list = <T>(h: T | T[] | undefined): T[] => (h === undefined ? [] : Array.isArray(h) ? h : [h]);
    route.preValidation = [emptyBody, ...list(route.preValidation)];
    route.preHandler = [replayIdempotent, ...list(route.preHandler)];
    route.onSend = [storeAndAudit, ...list(route.onSend)];
  });

  for (const area of platform.areas) await area.routes?.(app, ctx, platform.state(area.name));
  app.decorate("routeTable", ctx.routeTable);
  return app;
}
