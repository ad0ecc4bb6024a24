import type { Static, TSchema } from "@sinclair/typebox";
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from "fastify";
import type { AuthRule } from "./auth-rule.js";
import type { ErrorCode } from "./errors.js";
import type { RouteGuardName } from "./route-guard.js";

type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
type OrgRole = "member" | "admin" | "owner";
/** the type a part of the request has: its schema's static type, or nothing when the route takes none */
type Input<S> = S extends TSchema ? Static<S> : undefined;

/** The request a handler gets, its params, query, body and headers typed from the declaration's schemas. */
export type RouteRequest<P = undefined, Q = undefined, B = undefined, H = undefined> = FastifyRequest<{
  Params: Input<P>;
  Querystring: Input<Q>;
  Body: Input<B>;
  Headers: Input<H>;
}>;

/**
 * One operation of the public API, declared as data: what it is called and does (operation id, summaries, tags),
 * what it takes (TypeBox schemas for params, query, body and headers; the handler's input types come from them),
 * what it answers (success schemas; the error answers follow from the declaration, route-schema.ts), and who may
 * call it (auth rule, organization role). `admits`: the route creates or grows billable resources, so it can
 * answer every admission refusal (funds, budgets, deploy rules, partner limits), which the document lists.
 */
export interface RouteDeclaration<P = undefined, Q = undefined, B = undefined, H = undefined> {
  method: Method | Method[];
  url: string;
  /** required on every documented route; hidden ones (the console's page) may leave it out */
  operationId?: string;
  summary: string;
  /** Korean one-line summary for the manual (?lang=ko) */
  summaryKo?: string;
  description?: string;
  tags: string[];
  params?: P;
  query?: Q;
  body?: B;
  headers?: H;
  /** success answers by status (a TypeBox schema, or `{content: {...}}` for other media types) */
  response: Record<number, unknown>;
  auth: AuthRule;
  /** /v1/org routes: the organization role the caller needs (404 outside an organization, 403 below it) */
  orgRole?: OrgRole;
  /** an area's rule on who may call the route beyond scope and role (route-guard.ts); by default its scope's */
  guard?: RouteGuardName;
  admits?: boolean;
  /**
   * The answer never ends (Server-Sent Events): generic walkers of the route table and the document (fuzz, scope
   * checks) skip it, as a request that waits for the whole answer would wait forever. The document marks it
   * `x-streams: true`.
   */
  streams?: boolean;
  /** area codes the route can answer beyond what the declaration implies */
  errors?: ErrorCode[];
  /** maps a failing body or query field to the spec's code, e.g. {"/slug": "bad_slug"} */
  validationCodes?: Record<string, string>;
  /** the route is not part of the API (the console's page and session) */
  hide?: boolean;
  /** extra document fields (consumes for raw bodies...) */
  document?: Record<string, unknown>;
  /** the rare Fastify options a route needs beyond the declaration: bodyLimit, preHandler, ... */
  options?: Pick<RouteOptions, "bodyLimit" | "preHandler" | "preValidation" | "onSend" | "exposeHeadRoute">;
  handler: (request: RouteRequest<P, Q, B, H>, reply: FastifyReply) => unknown;
}

/** An operation ready to register; its input types are erased once declared. */
export type Route = RouteDeclaration<any, any, any, any>;

/** Declares one operation; the type parameters are inferred from the schemas, so handlers see typed inputs. */
export function route<
  P extends TSchema | undefined = undefined,
  Q extends TSchema | undefined = undefined,
  B extends TSchema | undefined = undefined,
  H extends TSchema | undefined = undefined,
>(declaration: RouteDeclaration<P, Q, B, H>): Route {
  return declaration as Route;
}

/** The Fastify route options of one declaration; app.ts's onRoute hooks then document, guard and audit it. */
export function routeOptions(d: Route): RouteOptions {
  const schema: Record<string, unknown> = {
    ...(d.operationId ? { operationId: d.operationId } : {}),
    tags: d.tags,
    summary: d.summary,
    ...(d.description ? { description: d.description } : {}),
    ...(d.hide ? { hide: true } : {}),
    ...(d.streams ? { "x-streams": true } : {}),
    ...d.document,
    ...(d.params ? { params: d.params } : {}),
    ...(d.query ? { querystring: d.query } : {}),
    ...(d.body ? { body: d.body } : {}),
    ...(d.headers ? { headers: d.headers } : {}),
    response: d.response,
  };
  return {
    ...d.options,
    method: d.method,
    url: d.url,
    schema,
    config: {
      auth: d.auth,
      ...(d.orgRole ? { orgRole: d.orgRole } : {}),
      ...(d.guard ? { guard: d.guard } : {}),
      ...(d.admits ? { admits: true } : {}),
      ...(d.streams ? { streams: true } : {}),
      // what the declaration implies is added when documented (route-schema.ts); these are the area's own
      errors: d.errors ?? [],
      ...(d.validationCodes ? { validationCodes: d.validationCodes } : {}),
      ...(d.summaryKo ? { summaryKo: d.summaryKo } : {}),
    },
    handler: d.handler as RouteOptions["handler"],
  };
}

/** Registers an area's declared operations. */
export function registerRoutes(app: FastifyInstance, routes: readonly Route[]): void {
  for (const r of routes) app.route(routeOptions(r));
}
