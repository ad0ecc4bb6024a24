import { Type } from "@sinclair/typebox";
import { Body } from "../../http/schemas.js";
import { backupView, commandView, databaseView } from "../view.js";
import { CreateBody } from "../schemas.js";
import {
  AttachedApp,
  caller,
  Instance,
  InstanceWithCommand,
  Params,
  read,
  Size,
  tags,
  write,
  type RouteDeps,
} from "./schemas.js";
import { commandRoute, createdView, readRoute } from "./instance-route.js";
import { route, type Route } from "../../http/route.js";
import { resourceRoutes } from "../../http/resource-routes.js";
import type { DatabaseRow } from "../repo.js";

/** What a create gives: the new row and the command that provisions it. */
type Made = Parameters<typeof createdView>[0];

/** The instance itself: create, list, read, delete, start/stop, resize, passwords. */
export function coreRoutes({ svc, config }: RouteDeps): Route[] {
  return [
    // the standard create and list (resourceRoutes); reading one instance answers more than its list view
    ...resourceRoutes({
      name: "Database",
      url: "/v1/databases",
      tags,
      params: Params,
      scope: "databases",
      instances: true,
      schema: Instance,
      view: (row: DatabaseRow) => databaseView(row, config),
      create: {
        summary: "Create a PostgreSQL instance; 201 with one-time passwords and URLs.",
        summaryKo: "데이터베이스를 만듭니다.",
        admits: true,
        errors: ["slug_taken", "provision_failed", "stop_not_supported"],
        validationCodes: { "/slug": "bad_slug", "/name": "bad_slug", "/size": "bad_size", "/version": "bad_version" },
        body: CreateBody,
        answer: { schema: InstanceWithCommand, view: (made: Made) => createdView(made, config) },
        run: (p, body) => svc.create(p, body),
      },
      list: {
        summary: "The caller's instances, removed ones excluded.",
        summaryKo: "데이터베이스 목록(삭제된 것 제외).",
        run: (p, filter) => svc.list(p, filter),
      },
    }),
    route({
      method: "GET",
      url: "/v1/databases/:id",
      operationId: "getDatabase",
      tags,
      summary: "One instance by id or slug, with its 20 latest backups and recent commands.",
      summaryKo: "데이터베이스와 최근 백업 20개.",
      auth: read,
      params: Params,
      response: { 200: Instance },
      handler: async (request) => {
        const { row, backups, commands } = await svc.detail(caller(request), request.params.id);
        return { ...databaseView(row, config), backups: backups.map(backupView), commands: commands.map(commandView) };
      },
    }),
    commandRoute(
      {
        method: "DELETE",
        path: "",
        operationId: "deleteDatabase",
        summary:
          "Soft delete: the server stops; data and backups are kept 7 days. A database with branches answers 409 has_branches.",
        summaryKo: "소프트 삭제(7일 유예).",
        errors: ["database_removed", "has_branches"],
      },
      (p, id) => svc.remove(p, id),
    ),
    route({
      method: "POST",
      url: "/v1/databases/:id/rotate-password",
      operationId: "rotateDatabasePassword",
      tags,
      summary:
        "Issue a new password (shown once); the old one is refused at once. Attached apps are rolled with the new URL (apps_restarting).",
      summaryKo: "새 비밀번호를 발급하고 이전 비밀번호를 즉시 무효화합니다.",
      auth: write,
      errors: ["not_running", "rotation_failed"],
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
      handler: async (request) => {
        const { row, commandId, password, appsRestarting } = await svc.rotatePassword(
          caller(request),
          request.params.id,
        );
        return { ...databaseView(row, config, { password }), command_id: commandId, apps_restarting: appsRestarting };
      },
    }),
    commandRoute(
      {
        method: "POST",
        path: "/stop",
        operationId: "stopDatabase",
        summary: "Stop (dev only); new connections fail, data is kept.",
        summaryKo: "dev 데이터베이스를 멈춥니다.",
        errors: ["stop_not_supported", "not_running"],
      },
      (p, id) => svc.stop(p, id),
    ),
    commandRoute(
      {
        method: "POST",
        path: "/start",
        operationId: "startDatabase",
        summary: "Start a stopped database.",
        summaryKo: "멈춘 데이터베이스를 시작합니다.",
        errors: ["not_stopped"],
      },
      (p, id) => svc.start(p, id),
    ),
    commandRoute(
      {
        method: "POST",
        path: "/resize",
        operationId: "resizeDatabase",
        summary: "Change size (server settings, applied with a restart) and optionally grow storage.",
        summaryKo: "크기를 바꿉니다(재시작).",
        admits: true,
        errors: ["database_removed"],
        validationCodes: { "/size": "bad_size" },
        body: Body({ size: Size, storage_gb: Type.Optional(Type.Integer({ minimum: 1, maximum: 16384 })) }),
      },
      (p, id, body) => svc.resize(p, id, body.size, body.storage_gb),
    ),
    readRoute(
      {
        path: "/attached-apps",
        operationId: "listAttachedApps",
        summary:
          "Apps (pods) attached to the database: they get its DATABASE_URL and are rolled when its password rotates.",
        summaryKo: "연결된 앱 미리보기.",
        schema: Type.Array(AttachedApp),
      },
      (p, id) => svc.attachedApps(p, id),
    ),
    route({
      method: "POST",
      url: "/v1/databases/:id/initial-credentials",
      operationId: "revealInitialCredentials",
      tags,
      summary: "One-time reveal of the initial credentials; afterwards 409.",
      summaryKo: "초기 자격 증명을 한 번만 보여 줍니다.",
      auth: write,
      errors: ["credentials_already_revealed", "still_creating"],
      params: Params,
      response: { 200: Instance },
      handler: async (request) => {
        const { row, secrets } = await svc.revealInitialCredentials(caller(request), request.params.id);
        return databaseView(row, config, secrets);
      },
    }),
  ];
}
