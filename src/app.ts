import { randomUUID } from "node:crypto";
import Fastify, { type FastifyInstance, type onSendHookHandler, type preHandlerHookHandler, type preValidationHookHandler } from "fastify";
import swagger from "@fastify/swagger";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { Config } from "./config/config.js";
import type { Db } from "./store/db.js";
import "./http/types.js";
import { ErrorBodySchema, installErrorHandling } from "./http/error-handler.js";
import { installValidators } from "./http/validation.js";
import { authorize, identify, requireAuthDeclarations, type AuthDeps } from "./http/authenticate.js";
import { ApiError } from "./http/errors.js";
import { Idempotency } from "./http/idempotency.js";
import { InstanceRegistry } from "./http/instances.js";
import { rateLimitHeaders, type RateLimitStore } from "./http/rate-limit.js";
import { TokenResolver } from "./auth/token-resolver.js";
import { recordAudit } from "./audit/record.js";
import type { JobQueue } from "./jobs/queue.js";
import { registerAreas } from "./areas.js";
import type { DatabaseProvider } from "./databases/provider/types.js";
import { collectRouteTable, type RouteEntry } from "./http/route-table.js";

export type App = FastifyInstance;

export interface AppDeps {
  config: Config;
  db: Db;
  /** connection string of the control store, for the LISTEN connection */
  databaseUrl: string;
  rateLimit: RateLimitStore;
  jobs: JobQueue;
  /** resolved operator secret (configured or generated at first start) */
  operatorToken: string;
  /** what runs managed PostgreSQL servers */
  databases: DatabaseProvider;
}

export interface AppContext extends AppDeps {
  tokens: TokenResolver;
  instances: InstanceRegistry;
  /** every registered route, for the manual and the auth tests */
  routeTable: RouteEntry[];
}

const MUTATING = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/** Builds the whole API over the given infrastructure; tests and main() both come through here. */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const { config, db } = deps;
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
    ...deps,
    tokens: new TokenResolver(db, deps.databaseUrl, app.log),
    instances: new InstanceRegistry(),
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

  const authDeps: AuthDeps = { tokens: ctx.tokens, instances: ctx.instances, operatorToken: deps.operatorToken, fleetToken: config.fleetToken };
  const idempotency = new Idempotency(db);

  app.addHook("onRequest", async (request, reply) => {
    reply.header("x-request-id", request.id);
    await identify(request, authDeps);
    // every caller is limited: an account across all its tokens, anyone else by client address
    const hit = await deps.rateLimit.hit(request.callerKey);
    reply.headers(rateLimitHeaders(config.rateLimitRps, hit));
    if (hit.count > config.rateLimitRps) {
      throw new ApiError(429, "too_many_requests", `More than ${config.rateLimitRps} requests per second; slow down.`, {
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
    if (request.principal) await recordAudit(db, request, reply.statusCode).catch((err) => request.log.error({ err }, "audit write failed"));
    return payload;
  };
  app.addHook("onRoute", (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (!methods.some((m) => MUTATING.has(m))) return;
    const list = <T>(h: T | T[] | undefined): T[] => (h === undefined ? [] : Array.isArray(h) ? h : [h]);
    route.preValidation = [emptyBody, ...list(route.preValidation)];
    route.preHandler = [replayIdempotent, ...list(route.preHandler)];
    route.onSend = [storeAndAudit, ...list(route.onSend)];
  });

  await registerAreas(app, ctx);
  app.decorate("routeTable", ctx.routeTable);
  return app;
}
