import { Type } from "@sinclair/typebox";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { FastifyInstance } from "fastify";
import { Body } from "../../http/schemas.js";
import { databaseView } from "../view.js";
import { Accepted, caller, Instance, Params, Size, tags, write, type RouteDeps } from "./schemas.js";

/** Settings of an instance: network allow-list, client groups, autoscale, label, extensions. */
export function settingsRoutes(app: FastifyInstance, { svc, config }: RouteDeps): void {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();

  r.patch(
    "/v1/databases/:id/allowlist",
    {
      config: {
        auth: write,
        errors: ["not_found", "database_removed", "bad_cidr"],
        summaryKo: "접속 허용 IP 목록(CIDR). 빈 배열은 모두 허용.",
      },
      schema: {
        operationId: "setDatabaseAllowlist",
        tags,
        summary: "CIDR allow-list; an empty array allows all; the platform's own apps are always allowed.",
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
      },
    },
    async (request, reply) =>
      reply.code(202).send({
        command_id: (await svc.setAllowlist(caller(request), request.params.id, request.body.allowlist)).commandId,
      }),
  );

  r.post(
    "/v1/databases/:id/authorize-clients",
    {
      config: { auth: write, errors: ["not_found"], summaryKo: "클라이언트 보안 그룹을 허가합니다." },
      schema: {
        operationId: "authorizeDatabaseClients",
        tags,
        summary: "Authorize client security groups.",
        params: Params,
        body: Body({ security_groups: Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 50 }) }),
        response: { 200: Instance },
      },
    },
    async (request) =>
      databaseView(
        await svc.authorizeClients(caller(request), request.params.id, request.body.security_groups),
        config,
      ),
  );

  r.patch(
    "/v1/databases/:id/compute",
    {
      config: { auth: write, errors: ["not_found", "invalid_request"], summaryKo: "컴퓨트 자동 확장 설정." },
      schema: {
        operationId: "setDatabaseCompute",
        tags,
        summary: "Compute autoscale settings.",
        params: Params,
        body: Body({
          enabled: Type.Boolean(),
          min_size: Type.Optional(Size),
          max_size: Type.Optional(Size),
          cpu_threshold_pct: Type.Optional(Type.Integer({ minimum: 10, maximum: 100 })),
        }),
        response: { 200: Instance },
      },
    },
    async (request) => databaseView(await svc.setCompute(caller(request), request.params.id, request.body), config),
  );

  r.patch(
    "/v1/databases/:id/storage",
    {
      config: { auth: write, errors: ["not_found", "invalid_request"], summaryKo: "스토리지 자동 확장 설정." },
      schema: {
        operationId: "setDatabaseStorage",
        tags,
        summary: "Storage autoscale settings.",
        params: Params,
        body: Body({
          enabled: Type.Boolean(),
          max_gb: Type.Optional(Type.Integer({ minimum: 1, maximum: 16384 })),
          threshold_pct: Type.Optional(Type.Integer({ minimum: 50, maximum: 95 })),
          step_gb: Type.Optional(Type.Integer({ minimum: 1, maximum: 1024 })),
        }),
        response: { 200: Instance },
      },
    },
    async (request) => databaseView(await svc.setStorage(caller(request), request.params.id, request.body), config),
  );

  r.patch(
    "/v1/databases/:id/rename",
    {
      config: { auth: write, errors: ["not_found"], summaryKo: "표시 이름(label)을 바꿉니다." },
      schema: {
        operationId: "renameDatabase",
        tags,
        summary: "Change the label (the slug and URLs stay).",
        params: Params,
        body: Body({ label: Type.String({ minLength: 1, maxLength: 100 }) }),
        response: { 200: Instance },
      },
    },
    async (request) => databaseView(await svc.rename(caller(request), request.params.id, request.body.label), config),
  );

  r.post(
    "/v1/databases/:id/extensions",
    {
      config: {
        auth: write,
        errors: ["not_found", "database_removed", "extension_not_allowed"],
        summaryKo: "기본 확장을 보장하고 허용된 확장을 추가합니다.",
      },
      schema: {
        operationId: "ensureDatabaseExtensions",
        tags,
        summary: "Ensure default extensions and add allow-listed ones.",
        params: Params,
        body: Body({ names: Type.Optional(Type.Array(Type.String({ maxLength: 64 }), { maxItems: 50 })) }),
        response: { 202: Accepted },
      },
    },
    async (request, reply) =>
      reply.code(202).send({
        command_id: (await svc.extensions(caller(request), request.params.id, request.body?.names ?? [])).commandId,
      }),
  );
}
