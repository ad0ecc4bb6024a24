import { randomUUID } from "node:crypto";
import Fastify, {
  type FastifyInstance,
  type onSendHookHandler,
  type preHandlerHookHandler,
  type preValidationHookHandler,
} from "fastify";
import swagger from "@fastify/swagger";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import "./http/types.js";
import { clientErrorHandler, frameworkErrors, installErrorHandling } from "./http/error-handler.js";
import { installValidators } from "./http/validation.js";
import { boundJsonDepth } from "./http/json-depth.js";
import { authorize, identify, requireAuthDeclarations, type AuthDeps } from "./http/authenticate.js";
import { ownerFieldOnCreateRoutes } from "./http/owner-context.js";
import { ApiError, notFound } from "./http/errors.js";
import { findUnstorable, storableText } from "./http/storable.js";
import { catalogMarkdown, documentRoute, shareErrorResponses, shareHeaders } from "./http/route-schema.js";
import { shareBodySchemas } from "./http/openapi-schemas.js";
import { registerRoutes } from "./http/route.js";
import { Idempotency } from "./http/idempotency.js";
import { rateLimitHeaders } from "./http/rate-limit.js";
import { TokenResolver } from "./auth/token-resolver.js";
import { lazyChildLogger } from "./http/lazy-logger.js";
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
    // a request's pino child is made only once it logs something (http/lazy-logger.ts)
    childLoggerFactory: lazyChildLogger,
    requestIdHeader: false,
    bodyLimit: config.bodyLimitBytes,
    exposeHeadRoutes: false,
    trustProxy: false,
    // every answer has the one error body: the 503 of a closing server comes from the onRequest hook below
    return503OnClosing: false,
    // a path parameter longer than any identifier is 414 (frameworkErrors), never a lookup
    routerOptions: { maxParamLength: 100 },
    frameworkErrors,
    clientErrorHandler,
    // slow or stalled clients are dropped (408 in the one error body) instead of holding connections
    connectionTimeout: config.http.idleTimeoutMs,
    keepAliveTimeout: config.http.keepAliveTimeoutMs,
    requestTimeout: config.http.requestTimeoutMs,
    http: {
      headersTimeout: config.http.headersTimeoutMs,
      requestTimeout: config.http.requestTimeoutMs,
      // how often node checks the two timeouts above (its default, 30 s, would let a slow client stay that long)
      connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(config.http.headersTimeoutMs / 4))),
    },
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
      info: {
        title: "Hosting platform API",
        version: "1.0.0",
        description: `The platform's public REST API. Every error answer is {"error":{"code","message"}}; each operation lists per status the codes it can answer. The error catalog:\n\n${catalogMarkdown()}`,
        contact: { name: "Platform operator", url: "/v1/manual" },
      },
      servers: [
        { url: "/", description: "This server (production, or local in development)", "x-internal": false } as {
          url: string;
          description: string;
        },
      ],
      components: {
        securitySchemes: {
          bearer: { type: "http", scheme: "bearer", description: "op_u_ full-access token or opk_ scoped key" },
        },
      },
    },
    transformObject: (doc) => {
      const openapi = (doc as { openapiObject: unknown }).openapiObject as OpenApiDoc;
      shareHeaders(openapi as never);
      shareErrorResponses(openapi as never);
      shareBodySchemas(openapi as never);
      return withTags(openapi, platform.areas) as never;
    },
  });
  // only JSON bodies: a text/plain body on a JSON route is 415, never parsed as a string
  app.removeContentTypeParser("text/plain");
  // JSON nested deeper than MAX_JSON_DEPTH is 400 before it is parsed, for every route (http/json-depth.ts)
  boundJsonDepth(app);

  requireAuthDeclarations(app, platform.kernel);
  ctx.routeTable = collectRouteTable(app);
  // limits on every schema, error codes per status, rate-limit headers and security, decided here for every route
  // create routes take {"owner": "me" | "org"} (http/owner-context.ts), added before the route is documented
  app.addHook("onRoute", ownerFieldOnCreateRoutes({ kernel: platform.kernel, db }));
  // routes that admit can answer every area's admission refusals (AreaModule.admissionErrors)
  const admissionCodes = platform.areas.flatMap((a) => a.admissionErrors ?? []);
  app.addHook("onRoute", (route) => documentRoute(route, admissionCodes));

  const authDeps: AuthDeps = {
    tokens: ctx.tokens,
    kernel: platform.kernel,
    db,
    operatorToken: platform.operatorToken,
    fleetToken: config.fleetToken,
  };
  const idempotency = new Idempotency(db, () => platform.kernel.require("hosts").leaseId());

  // during shutdown, answers to in-flight requests close their keep-alive connection, so close() can finish
  let closing = false;
  app.addHook("onRequest", async (request, reply) => {
    reply.header("x-request-id", request.id);
    if (closing) {
      reply.header("connection", "close");
      throw new ApiError("service_unavailable", "The server is shutting down; retry in a moment.");
    }
    await identify(request, authDeps);
    const successStatus = request.routeOptions.config.successStatus;
    // mutations carry their audit row with them, for the service's transaction (audit/record.ts);
    // its target comes from the path, which may hold text PostgreSQL cannot store
    if (successStatus !== undefined && request.principal) {
      const audit = auditDraft(request, successStatus);
      if (audit.target !== null) audit.target = storableText(audit.target);
      request.principal = { ...request.principal, audit };
    }
    // every caller is limited: an account across all its tokens, anyone else by client address
    const hit = await platform.rateLimit.hit(request.callerKey);
    reply.headers(rateLimitHeaders(config.rateLimitRps, hit));
    if (hit.count > config.rateLimitRps) {
      throw new ApiError("too_many_requests", `More than ${config.rateLimitRps} requests per second; slow down.`, {
        "retry-after": String(Math.max(1, Math.ceil(hit.resetMs / 1000))),
      });
    }
    await authorize(request, authDeps);
    // text PostgreSQL cannot store (NUL, unpaired surrogates) is refused once here for every route:
    // in the path it names nothing (404), in the query it is a bad parameter (400)
    if (findUnstorable(request.params) !== null) throw notFound();
    const inQuery = findUnstorable(request.query);
    if (inQuery !== null) throw unstorable("query parameter", inQuery);
  });
  app.addHook("preClose", async () => {
    closing = true;
  });
  app.addHook("onSend", (_request, reply, payload, done) => {
    if (closing) reply.header("connection", "close");
    done(null, payload);
  });

  // hooks that only mutations need are attached to mutating routes, keeping reads on the short path
  const emptyBody: preValidationHookHandler = async (request) => {
    // a POST without a body is an empty object, so optional bodies need no special schema and required fields are named
    if (request.body === undefined) request.body = {};
  };
  // body text PostgreSQL cannot store is refused for every route that takes a body (reads have none)
  const storableBody: preValidationHookHandler = async (request) => {
    const inBody = findUnstorable(request.body);
    if (inBody !== null) throw unstorable("body field", inBody);
  };
  // a mutation without a body schema takes no fields: {"zz_unknown":1} is refused like any unknown field
  // (a route that keeps raw bytes through its own parser gets a Buffer and checks it itself)
  const noBody: preValidationHookHandler = async (request) => {
    const body = request.body;
    if (body === undefined || Buffer.isBuffer(body)) return;
    if (body !== null && typeof body === "object" && !Array.isArray(body)) {
      const extra = Object.keys(body)[0];
      if (extra === undefined) return;
      throw new ApiError("invalid_request", `body field "${extra}" is not allowed.`);
    }
    throw new ApiError("invalid_request", "This endpoint takes no request body, or an empty JSON object.");
  };
  const replayIdempotent: preHandlerHookHandler = async (request, reply) => {
    if (await idempotency.begin(request, reply)) return reply;
  };
  const storeAndAudit: onSendHookHandler = async (request, reply, payload) => {
    await idempotency.complete(request, reply, payload);
    // a change commits its own row (auditedTransaction); here only requests that changed nothing are left. Their row
    // is written before the answer leaves (one retry); a store refusing it is logged, never turned into another answer
    const audit = () => recordRequestAudit(db, request, reply.statusCode);
    await audit()
      .catch(audit)
      .catch((err) => request.log.error({ err }, "audit row of an unchanged request could not be written"));
    return payload;
  };
  app.addHook("onRoute", (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (!methods.some((m) => MUTATING.has(m))) return;
    const successes = Object.keys((route.schema as { response?: object } | undefined)?.response ?? {}).filter((k) =>
      /^2\d\d$/.test(k),
    );
    route.config = { ...route.config, successStatus: successes.length ? Math.min(...successes.map(Number)) : 200 };
    const list = <T>(h: T | T[] | undefined): T[] => (h === undefined ? [] : Array.isArray(h) ? h : [h]);
    const hasBody = (route.schema as { body?: unknown } | undefined)?.body !== undefined;
    route.preValidation = [emptyBody, storableBody, ...(hasBody ? [] : [noBody]), ...list(route.preValidation)];
    route.preHandler = [replayIdempotent, ...list(route.preHandler)];
    route.onSend = [storeAndAudit, ...list(route.onSend)];
  });

  for (const area of platform.areas) {
    const declared = await area.routes?.(app, ctx, platform.state(area.name));
    if (declared) registerRoutes(app, declared);
  }
  app.decorate("routeTable", ctx.routeTable);
  return app;
}

const unstorable = (what: string, field: string) =>
  new ApiError(
    "invalid_request",
    `${what} "${storableText(field)}" contains a NUL character or an unpaired UTF-16 surrogate, which cannot be stored.`,
  );

interface OpenApiDoc {
  tags?: { name: string; description: string }[];
  paths: Record<string, Record<string, { tags?: string[] }>>;
}

/** The document's tag list: what each area declares, and a description from the name for tags an area has not described yet. */
function withTags(doc: OpenApiDoc, areas: Platform["areas"]): OpenApiDoc {
  const declared = new Map(areas.flatMap((a) => a.tags ?? []).map((t) => [t.name, t.description]));
  const used = new Set(Object.values(doc.paths).flatMap((ops) => Object.values(ops).flatMap((op) => op.tags ?? [])));
  const names = [...declared.keys(), ...[...used].filter((n) => !declared.has(n)).sort()];
  doc.tags = names.map((name) => ({
    name,
    description: declared.get(name) ?? `Endpoints of the ${name.replace(/[-_]/g, " ")} area.`,
  }));
  return doc;
}
