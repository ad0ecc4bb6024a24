import type { Static, TSchema } from "@sinclair/typebox";
import type { Principal } from "../../auth/principal.js";
import type { ErrorCode } from "../../http/errors.js";
import { route, type Route } from "../../http/route.js";
import { databaseView } from "../view.js";
import { Accepted, caller, Instance, Params, read as readRule, tags, write, type RouteDeps } from "./schemas.js";

type BodyOf<B> = B extends TSchema ? Static<B> : undefined;
type Row = Parameters<typeof databaseView>[0];

/** A change to one instance, /v1/databases/{id}<path>, by a caller with databases:write on it. */
interface InstanceChange<B extends TSchema | undefined> {
  method: "POST" | "PUT" | "PATCH" | "DELETE";
  /** after /v1/databases/:id ("" for the instance itself) */
  path: string;
  operationId: string;
  summary: string;
  summaryKo: string;
  errors?: ErrorCode[];
  admits?: boolean;
  validationCodes?: Record<string, string>;
  body?: B;
}

function changeRoute<B extends TSchema | undefined>(
  change: InstanceChange<B>,
  response: Record<number, TSchema>,
  answer: (caller: Principal, id: string, body: BodyOf<B>) => Promise<unknown>,
  status: number,
): Route {
  const { path, body, ...declared } = change;
  return route({
    ...declared,
    url: `/v1/databases/:id${path}`,
    tags,
    auth: write,
    params: Params,
    ...(body ? { body: body as TSchema } : {}),
    response,
    handler: async (request, reply) =>
      reply.code(status).send(await answer(caller(request), request.params.id, request.body as BodyOf<B>)),
  });
}

/** A change the service records as a command for the database jobs: 202 with the command's id. */
export function commandRoute<B extends TSchema | undefined = undefined>(
  change: InstanceChange<B>,
  run: (caller: Principal, id: string, body: BodyOf<B>) => Promise<{ commandId: string }>,
): Route {
  return changeRoute(
    change,
    { 202: Accepted },
    async (p, id, body) => ({ command_id: (await run(p, id, body)).commandId }),
    202,
  );
}

/** A change the service makes at once: 200 with the instance as it is now. */
export function settingRoute<B extends TSchema | undefined = undefined>(
  change: InstanceChange<B>,
  config: RouteDeps["config"],
  run: (caller: Principal, id: string, body: BodyOf<B>) => Promise<Row>,
): Route {
  return changeRoute(
    change,
    { 200: Instance },
    async (p, id, body) => databaseView(await run(p, id, body), config),
    200,
  );
}

/** A read of one instance's part, /v1/databases/{id}<path>, by a caller with databases:read on it. */
export function readRoute(
  read: { path: string; operationId: string; summary: string; summaryKo: string; schema: TSchema },
  run: (caller: Principal, id: string) => Promise<unknown>,
): Route {
  return route({
    method: "GET",
    url: `/v1/databases/:id${read.path}`,
    operationId: read.operationId,
    tags,
    summary: read.summary,
    summaryKo: read.summaryKo,
    auth: readRule,
    params: Params,
    response: { 200: read.schema },
    handler: async (request) => run(caller(request), request.params.id),
  });
}

/** A new database or branch (InstanceWithCommand): its one-time passwords, shown in this answer only. */
export function createdView(made: { row: Row; commandId: string }, config: RouteDeps["config"]) {
  const { row, commandId } = made;
  const secrets = { password: row.initial_password!, superuser_password: row.initial_superuser_password! };
  return { ...databaseView(row, config, secrets), command_id: commandId };
}
