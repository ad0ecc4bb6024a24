import { Type, type Static, type TObject, type TSchema } from "@sinclair/typebox";
import { callerOf, type InstanceFilter, type Principal } from "../auth/principal.js";
import type { Resource } from "../auth/scopes.js";
import type { AuthRule } from "./auth-rule.js";
import type { ErrorCode } from "./errors.js";
import { route, type Route } from "./route.js";
import { NoContent } from "./schemas.js";

/** What one standard operation says of itself; the rest of its route follows from the resource. */
export interface StandardOperation {
  summary: string;
  summaryKo?: string;
  description?: string;
  /** area codes the operation can answer beyond what its declaration implies (route.ts `errors`) */
  errors?: ErrorCode[];
  validationCodes?: Record<string, string>;
  /** it creates or grows billable resources (route.ts `admits`) */
  admits?: boolean;
}

/** The service calls behind the operations, each with the caller: by default the service's methods of these names. */
// (function properties, not methods: a service's parameter types are then checked against the schemas' types)
export interface StandardService<Row, CreateBody, UpdateBody, Created = Row> {
  create: (caller: Principal, body: CreateBody) => Promise<Created>;
  list: (caller: Principal, filter: InstanceFilter) => Promise<Row[]>;
  get: (caller: Principal, id: string) => Promise<Row>;
  update: (caller: Principal, id: string, body: UpdateBody) => Promise<Row>;
  remove: (caller: Principal, id: string) => Promise<unknown>;
}

type Call<K extends keyof StandardService<never, never, never>, Row, C, U, Created> = {
  /** the service call when it is not the service's method of the operation's name */
  run?: StandardService<Row, C, U, Created>[K];
};

/**
 * What a create answers when it is more than the resource (a secret shown once): its schema, and its view of
 * what the service's create gave.
 */
interface CreateAnswer<Created> {
  answer?: { schema: TSchema; view: (created: Created) => unknown };
}

/**
 * How a delete answers: 204 with no body (`schema`: the empty answer's schema, NoContent unless the document
 * has always shown another), or 200/202 with the resource as it is left (removed, or being removed).
 */
type RemoveAnswer = { status: 204; schema?: TSchema } | { status: 200 | 202 };

/**
 * One owned resource's standard operations (README "Adding an area", Routes): create (201), list, get, update
 * (PATCH) and delete, on `url` and `url/:<param>`. Each is an ordinary `route({...})`, so auth, admission, errors and the
 * OpenAPI document are exactly what a hand-written declaration gives.
 */
export interface ResourceDeclaration<Row, P extends TObject, C extends TSchema, U extends TSchema, Created = Row> {
  /** the noun of the operation ids: "PodTemplate" gives createPodTemplate, listPodTemplates, getPodTemplate... */
  name: string;
  /** the plural for listX when it is not name + "s" */
  plural?: string;
  /** the collection, e.g. /v1/pod-templates; one resource is `${url}/:<its param>` */
  url: string;
  tags: string[];
  /** the one path parameter naming a resource (its only property: id, or slug), with its description */
  params: P;
  /** the scope resource: reads need <scope>:read, changes <scope>:write */
  scope: Resource;
  /** keys may be limited to some instances of the resource (auth-rule.ts): create refuses them, list narrows */
  instances?: boolean;
  /** one resource as answered, and how a service row becomes it */
  schema: TSchema;
  view: (row: Row) => unknown;
  /** whose methods create, list, get, update and remove serve the declared operations (unless one has `run`) */
  service?: Partial<StandardService<Row, Static<C>, Static<U>, Created>>;
  /** the list answers `{ items: [...] }` rather than a bare array */
  listItems?: boolean;
  create?: StandardOperation & { body: C } & CreateAnswer<Created> & Call<"create", Row, Static<C>, Static<U>, Created>;
  list?: StandardOperation & Call<"list", Row, Static<C>, Static<U>, Created>;
  get?: StandardOperation & Call<"get", Row, Static<C>, Static<U>, Created>;
  update?: StandardOperation & { body: U } & Call<"update", Row, Static<C>, Static<U>, Created>;
  remove?: StandardOperation & RemoveAnswer & Call<"remove", Row, Static<C>, Static<U>, Created>;
}

/** The declared standard operations as routes, in the order create, list, get, update, delete. */
export function resourceRoutes<Row, P extends TObject, C extends TSchema, U extends TSchema, Created = Row>(
  r: ResourceDeclaration<Row, P, C, U, Created>,
): Route[] {
  const keys = Object.keys(r.params.properties);
  if (keys.length !== 1) throw new Error(`resourceRoutes ${r.url}: params must name exactly one path parameter`);
  const param = keys[0];
  const one = `${r.url}/:${param}`;
  const scope = (action: "read" | "write") => `${r.scope}:${action}` as const;
  const onOne = (action: "read" | "write"): AuthRule =>
    r.instances ? { scope: scope(action), instance: { param } } : { scope: scope(action) };
  type Service = StandardService<Row, Static<C>, Static<U>, Created>;
  const call = <K extends keyof Service>(name: K, op: { run?: Service[K] }): Service[K] => {
    if (op.run) return op.run;
    const fn = r.service?.[name];
    if (!fn) throw new Error(`resourceRoutes ${r.url}: the service has no ${name} for the declared operation`);
    return fn.bind(r.service) as Service[K];
  };
  const idOf = (params: unknown) => (params as Record<string, string>)[param];
  const base = (verb: string, op: StandardOperation) => ({
    operationId: `${verb}${verb === "list" ? (r.plural ?? `${r.name}s`) : r.name}`,
    tags: r.tags,
    summary: op.summary,
    ...(op.summaryKo !== undefined ? { summaryKo: op.summaryKo } : {}),
    ...(op.description !== undefined ? { description: op.description } : {}),
    ...(op.errors ? { errors: op.errors } : {}),
    ...(op.validationCodes ? { validationCodes: op.validationCodes } : {}),
    ...(op.admits ? { admits: true } : {}),
  });
  /** what an operation on the collection (`url`) declares besides its answer: create and list may limit instances */
  const onCollection = (verb: string, op: StandardOperation, method: "POST" | "GET", instance: "create" | "list") => {
    const action = instance === "create" ? "write" : "read";
    return {
      ...base(verb, op),
      method,
      url: r.url,
      auth: r.instances ? { scope: scope(action), instance } : { scope: scope(action) },
    };
  };
  /** what an operation on one resource (`url/:param`) declares besides its answer */
  const onOneResource = (verb: string, op: StandardOperation, method: "GET" | "PATCH" | "DELETE") => ({
    ...base(verb, op),
    method,
    url: one,
    auth: onOne(method === "GET" ? "read" : "write"),
    params: r.params,
  });
  const routes: Route[] = [];

  if (r.create) {
    const create = call("create", r.create);
    const answer = r.create.answer ?? {
      schema: r.schema,
      view: (created: Created) => r.view(created as unknown as Row),
    };
    routes.push(
      route({
        ...onCollection("create", r.create, "POST", "create"),
        body: r.create.body as TSchema,
        response: { 201: answer.schema },
        handler: async (request, reply) =>
          reply.code(201).send(await answer.view(await create(callerOf(request), request.body as Static<C>))),
      }),
    );
  }
  if (r.list) {
    const list = call("list", r.list);
    routes.push(
      route({
        ...onCollection("list", r.list, "GET", "list"),
        response: { 200: r.listItems ? Type.Object({ items: Type.Array(r.schema) }) : Type.Array(r.schema) },
        handler: async (request) => {
          // one at a time: a view may ask the store (a site's visibility), and a list should not take the pool
          const views = [];
          for (const row of await list(callerOf(request), request.instanceFilter)) views.push(await r.view(row));
          return r.listItems ? { items: views } : views;
        },
      }),
    );
  }
  if (r.get) {
    const get = call("get", r.get);
    routes.push(
      route({
        ...onOneResource("get", r.get, "GET"),
        response: { 200: r.schema },
        handler: async (request) => r.view(await get(callerOf(request), idOf(request.params))),
      }),
    );
  }
  if (r.update) {
    const update = call("update", r.update);
    routes.push(
      route({
        ...onOneResource("update", r.update, "PATCH"),
        body: r.update.body as TSchema,
        response: { 200: r.schema },
        handler: async (request) =>
          r.view(await update(callerOf(request), idOf(request.params), request.body as Static<U>)),
      }),
    );
  }
  if (r.remove) {
    const remove = call("remove", r.remove);
    const removed = r.remove;
    routes.push(
      route({
        ...onOneResource("delete", removed, "DELETE"),
        response: { [removed.status]: removed.status === 204 ? (removed.schema ?? NoContent) : r.schema },
        handler: async (request, reply) => {
          const row = await remove(callerOf(request), idOf(request.params));
          return removed.status === 204
            ? reply.code(204).send(null)
            : reply.code(removed.status).send(await r.view(row as Row));
        },
      }),
    );
  }
  return routes;
}
