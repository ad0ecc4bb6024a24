import { Type } from "@sinclair/typebox";
import { Body } from "../../http/schemas.js";
import { backupView } from "../view.js";
import { Accepted, Backup, caller, Params, tags, write, type RouteDeps } from "./schemas.js";
import { route, type Route } from "../../http/route.js";

/** Snapshots, point-in-time restore and the index of every backup. */
export function backupRoutes({ svc }: RouteDeps): Route[] {
  return [
    route({
      method: "POST",
      url: "/v1/databases/:id/backup",
      operationId: "backupDatabase",
      tags,
      summary: "Take a snapshot now; optional label.",
      summaryKo: "즉시 스냅샷 백업(선택 label).",
      auth: write,
      errors: ["not_running"],
      params: Params,
      body: Body({ label: Type.Optional(Type.String({ maxLength: 100 })) }),
      response: { 202: Accepted },
      handler: async (request, reply) =>
        reply
          .code(202)
          .send({ command_id: (await svc.backup(caller(request), request.params.id, request.body?.label)).commandId }),
    }),
    route({
      method: "POST",
      url: "/v1/databases/:id/restore",
      operationId: "restoreDatabase",
      tags,
      summary:
        "Point-in-time restore; validates the target time, then 501 restore_not_ready unless DB_RESTORE_ENABLED=1.",
      summaryKo: "시점 복구(현재 501 restore_not_ready).",
      auth: write,
      errors: ["bad_time", "future_time", "out_of_retention", "restore_not_ready", "not_restorable"],
      params: Params,
      body: Body({
        target_time: Type.Optional(Type.String({ maxLength: 64 })),
        time: Type.Optional(Type.String({ maxLength: 64 })),
      }),
      response: { 202: Accepted },
      handler: async (request, reply) => {
        const { commandId } = await svc.restore(
          caller(request),
          request.params.id,
          request.body?.target_time ?? request.body?.time,
        );
        return reply.code(202).send({ command_id: commandId });
      },
    }),
    route({
      method: "GET",
      url: "/v1/backups",
      operationId: "listBackups",
      tags: ["backups"],
      summary: "Index of all the caller's backups, newest first.",
      summaryKo: "모든 백업 목록.",
      auth: { scope: "backups:read" },
      query: Type.Object({ limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 200 })) }),
      response: { 200: Type.Array(Backup) },
      handler: async (request) => (await svc.backups(caller(request), request.query.limit ?? 200)).map(backupView),
    }),
  ];
}
