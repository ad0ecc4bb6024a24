import { Type } from "@sinclair/typebox";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { FastifyInstance } from "fastify";
import { Body } from "../../http/schemas.js";
import { backupView, commandView, databaseView } from "../view.js";
import {
  Accepted,
  AttachedApp,
  caller,
  Instance,
  InstanceWithCommand,
  Params,
  read,
  SLUG,
  Size,
  tags,
  write,
  type RouteDeps,
} from "./schemas.js";

/** The instance itself: create, list, read, delete, start/stop, resize, passwords. */
export function coreRoutes(app: FastifyInstance, { svc, config }: RouteDeps): void {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();

  r.post(
    "/v1/databases",
    {
      config: {
        auth: { scope: "databases:write", instance: "create" },
        validationCodes: { "/slug": "bad_slug", "/name": "bad_slug", "/size": "bad_size", "/version": "bad_version" },
        errors: [
          "bad_slug",
          "bad_size",
          "bad_version",
          "slug_taken",
          "insufficient_funds",
          "budget_exceeded",
          "deploy_rule_violation",
          "provision_failed",
        ],
        summaryKo: "데이터베이스를 만듭니다.",
      },
      schema: {
        operationId: "createDatabase",
        tags,
        summary: "Create a PostgreSQL instance; 201 with one-time passwords and URLs.",
        body: Body({
          name: Type.String({ pattern: SLUG, minLength: 3, maxLength: 40 }),
          slug: Type.Optional(Type.String({ pattern: SLUG, minLength: 3, maxLength: 40 })),
          engine: Type.Optional(Type.Literal("postgres")),
          version: Type.Optional(Type.Union([Type.Literal(16), Type.Literal(17)])),
          size: Type.Optional(Size),
          storage_gb: Type.Optional(Type.Integer({ minimum: 1, maximum: 16384 })),
          pitr_retention_days: Type.Optional(Type.Integer({ minimum: 1, maximum: 35 })),
        }),
        response: { 201: InstanceWithCommand },
      },
    },
    async (request, reply) => {
      const { row, commandId } = await svc.create(caller(request), request.body);
      const secrets = { password: row.initial_password!, superuser_password: row.initial_superuser_password! };
      return reply.code(201).send({ ...databaseView(row, config, secrets), command_id: commandId });
    },
  );

  r.get(
    "/v1/databases",
    {
      config: {
        errors: [],
        auth: { scope: "databases:read", instance: "list" },
        summaryKo: "데이터베이스 목록(삭제된 것 제외).",
      },
      schema: {
        operationId: "listDatabases",
        tags,
        summary: "The caller's instances, removed ones excluded.",
        response: { 200: Type.Array(Instance) },
      },
    },
    async (request) =>
      (await svc.list(caller(request), request.instanceFilter)).map((row) => databaseView(row, config)),
  );

  r.get(
    "/v1/databases/:id",
    {
      config: { auth: read, errors: ["not_found"], summaryKo: "데이터베이스와 최근 백업 20개." },
      schema: {
        operationId: "getDatabase",
        tags,
        summary: "One instance by id or slug, with its 20 latest backups and recent commands.",
        params: Params,
        response: { 200: Instance },
      },
    },
    async (request) => {
      const { row, backups, commands } = await svc.detail(caller(request), request.params.id);
      return { ...databaseView(row, config), backups: backups.map(backupView), commands: commands.map(commandView) };
    },
  );

  r.delete(
    "/v1/databases/:id",
    {
      config: { auth: write, errors: ["not_found", "database_removed"], summaryKo: "소프트 삭제(7일 유예)." },
      schema: {
        operationId: "deleteDatabase",
        tags,
        summary: "Soft delete: the server stops; data and backups are kept 7 days.",
        params: Params,
        response: { 202: Accepted },
      },
    },
    async (request, reply) =>
      reply.code(202).send({ command_id: (await svc.remove(caller(request), request.params.id)).commandId }),
  );

  r.post(
    "/v1/databases/:id/rotate-password",
    {
      config: {
        auth: write,
        errors: ["not_found", "not_running", "rotation_failed"],
        summaryKo: "새 비밀번호를 발급하고 이전 비밀번호를 즉시 무효화합니다.",
      },
      schema: {
        operationId: "rotateDatabasePassword",
        tags,
        summary:
          "Issue a new password (shown once); the old one is refused at once. Attached apps are rolled with the new URL (apps_restarting).",
        params: Params,
        response: {
          200: Type.Composite([
            InstanceWithCommand,
            Type.Object({
              apps_restarting: Type.Array(Type.String(), {
                description: "ids of the attached apps being restarted with the new password",
              }),
            }),
          ]),
        },
      },
    },
    async (request) => {
      const { row, commandId, password, appsRestarting } = await svc.rotatePassword(caller(request), request.params.id);
      return { ...databaseView(row, config, { password }), command_id: commandId, apps_restarting: appsRestarting };
    },
  );

  r.post(
    "/v1/databases/:id/stop",
    {
      config: {
        auth: write,
        errors: ["not_found", "stop_not_supported", "not_running"],
        summaryKo: "dev 데이터베이스를 멈춥니다.",
      },
      schema: {
        operationId: "stopDatabase",
        tags,
        summary: "Stop (dev only); new connections fail, data is kept.",
        params: Params,
        response: { 202: Accepted },
      },
    },
    async (request, reply) =>
      reply.code(202).send({ command_id: (await svc.stop(caller(request), request.params.id)).commandId }),
  );

  r.post(
    "/v1/databases/:id/start",
    {
      config: { auth: write, errors: ["not_found", "not_stopped"], summaryKo: "멈춘 데이터베이스를 시작합니다." },
      schema: {
        operationId: "startDatabase",
        tags,
        summary: "Start a stopped database.",
        params: Params,
        response: { 202: Accepted },
      },
    },
    async (request, reply) =>
      reply.code(202).send({ command_id: (await svc.start(caller(request), request.params.id)).commandId }),
  );

  r.post(
    "/v1/databases/:id/resize",
    {
      config: {
        auth: write,
        validationCodes: { "/size": "bad_size" },
        errors: [
          "not_found",
          "bad_size",
          "invalid_request",
          "database_removed",
          "insufficient_funds",
          "budget_exceeded",
          "deploy_rule_violation",
        ],
        summaryKo: "크기를 바꿉니다(재시작).",
      },
      schema: {
        operationId: "resizeDatabase",
        tags,
        summary: "Change size (server settings, applied with a restart) and optionally grow storage.",
        params: Params,
        body: Body({ size: Size, storage_gb: Type.Optional(Type.Integer({ minimum: 1, maximum: 16384 })) }),
        response: { 202: Accepted },
      },
    },
    async (request, reply) =>
      reply.code(202).send({
        command_id: (await svc.resize(caller(request), request.params.id, request.body.size, request.body.storage_gb))
          .commandId,
      }),
  );

  r.get(
    "/v1/databases/:id/attached-apps",
    {
      config: { auth: read, errors: ["not_found"], summaryKo: "연결된 앱 미리보기." },
      schema: {
        operationId: "listAttachedApps",
        tags,
        summary:
          "Apps (pods) attached to the database: they get its DATABASE_URL and are rolled when its password rotates.",
        params: Params,
        response: { 200: Type.Array(AttachedApp) },
      },
    },
    async (request) => svc.attachedApps(caller(request), request.params.id),
  );

  r.post(
    "/v1/databases/:id/initial-credentials",
    {
      config: {
        auth: write,
        errors: ["not_found", "credentials_already_revealed", "still_creating"],
        summaryKo: "초기 자격 증명을 한 번만 보여 줍니다.",
      },
      schema: {
        operationId: "revealInitialCredentials",
        tags,
        summary: "One-time reveal of the initial credentials; afterwards 409.",
        params: Params,
        response: { 200: Instance },
      },
    },
    async (request) => {
      const { row, secrets } = await svc.revealInitialCredentials(caller(request), request.params.id);
      return databaseView(row, config, secrets);
    },
  );
}
