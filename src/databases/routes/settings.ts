import { Type, type Static, type TSchema } from "@sinclair/typebox";
import type { Principal } from "../../auth/principal.js";
import { Body } from "../../http/schemas.js";
import { databaseView } from "../view.js";
import { ComputeBody, StorageBody } from "../schemas.js";
import { Accepted, caller, Instance, Params, tags, write, type RouteDeps } from "./schemas.js";
import { route, type Route } from "../../http/route.js";

/** PATCH /v1/databases/{id}/compute or /storage: the two autoscale settings, alike but for their body. */
function autoscaleRoute<B extends TSchema>(
  part: "compute" | "storage",
  body: B,
  summaryKo: string,
  set: (p: Principal, ref: string, settings: Static<B>) => Promise<Parameters<typeof databaseView>[0]>,
  config: RouteDeps["config"],
): Route {
  const name = part === "compute" ? "Compute" : "Storage";
  return route({
    method: "PATCH",
    url: `/v1/databases/:id/${part}`,
    operationId: `setDatabase${name}`,
    tags,
    summary: `${name} autoscale settings.`,
    summaryKo,
    auth: write,
    params: Params,
    body,
    response: { 200: Instance },
    handler: async (request) => databaseView(await set(caller(request), request.params.id, request.body), config),
  });
}

/** Settings of an instance: network allow-list, client groups, autoscale, label, extensions. */
export function settingsRoutes({ svc, config }: RouteDeps): Route[] {
  return [
    route({
      method: "PATCH",
      url: "/v1/databases/:id/allowlist",
      operationId: "setDatabaseAllowlist",
      tags,
      summary: "CIDR allow-list; an empty array allows all; the platform's own apps are always allowed.",
      summaryKo: "접속 허용 IP 목록(CIDR). 빈 배열은 모두 허용.",
      auth: write,
      errors: ["database_removed", "bad_cidr"],
      params: Params,
      body: Body({
        allowlist: Type.Array(
          Type.Object(
            { cidr: Type.String({ maxLength: 64 }), label: Type.Optional(Type.String({ maxLength: 100 })) },
            { additionalProperties: false },
          ),
          { maxItems: 100 },
        ),
      }),
      response: { 202: Accepted },
      handler: async (request, reply) =>
        reply.code(202).send({
          command_id: (await svc.setAllowlist(caller(request), request.params.id, request.body.allowlist)).commandId,
        }),
    }),
    route({
      method: "POST",
      url: "/v1/databases/:id/authorize-clients",
      operationId: "authorizeDatabaseClients",
      tags,
      summary: "Authorize client security groups.",
      summaryKo: "클라이언트 보안 그룹을 허가합니다.",
      auth: write,
      params: Params,
      body: Body({ security_groups: Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 50 }) }),
      response: { 200: Instance },
      handler: async (request) =>
        databaseView(
          await svc.authorizeClients(caller(request), request.params.id, request.body.security_groups),
          config,
        ),
    }),
    autoscaleRoute("compute", ComputeBody, "컴퓨트 자동 확장 설정.", svc.setCompute, config),
    autoscaleRoute("storage", StorageBody, "스토리지 자동 확장 설정.", svc.setStorage, config),
    route({
      method: "PATCH",
      url: "/v1/databases/:id/rename",
      operationId: "renameDatabase",
      tags,
      summary: "Change the label (the slug and URLs stay).",
      summaryKo: "표시 이름(label)을 바꿉니다.",
      auth: write,
      params: Params,
      body: Body({ label: Type.String({ minLength: 1, maxLength: 100 }) }),
      response: { 200: Instance },
      handler: async (request) =>
        databaseView(await svc.rename(caller(request), request.params.id, request.body.label), config),
    }),
    route({
      method: "POST",
      url: "/v1/databases/:id/extensions",
      operationId: "ensureDatabaseExtensions",
      tags,
      summary: "Ensure default extensions and add allow-listed ones.",
      summaryKo: "기본 확장을 보장하고 허용된 확장을 추가합니다.",
      auth: write,
      errors: ["database_removed", "extension_not_allowed"],
      params: Params,
      body: Body({ names: Type.Optional(Type.Array(Type.String({ maxLength: 64 }), { maxItems: 50 })) }),
      response: { 202: Accepted },
      handler: async (request, reply) =>
        reply.code(202).send({
          command_id: (await svc.extensions(caller(request), request.params.id, request.body?.names ?? [])).commandId,
        }),
    }),
  ];
}
