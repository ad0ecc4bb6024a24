import { Type } from "@sinclair/typebox";
import { Body } from "../../http/schemas.js";
import { backupView } from "../view.js";
import { Backup, caller, type RouteDeps } from "./schemas.js";
import { commandRoute } from "./instance-route.js";
import { route, type Route } from "../../http/route.js";

/** Snapshots, point-in-time restore and the index of every backup. */
export function backupRoutes({ svc }: RouteDeps): Route[] {
  return [
    commandRoute(
      {
        method: "POST",
        path: "/backup",
        operationId: "backupDatabase",
        summary: "Take a snapshot now; optional label.",
        summaryKo: "즉시 스냅샷 백업(선택 label).",
        errors: ["not_running"],
        body: Body({ label: Type.Optional(Type.String({ maxLength: 100 })) }),
      },
      (p, id, body) => svc.backup(p, id, body?.label),
    ),
    commandRoute(
      {
        method: "POST",
        path: "/restore",
        operationId: "restoreDatabase",
        summary:
          "Point-in-time restore; validates the target time, then 501 restore_not_ready unless DB_RESTORE_ENABLED=1.",
        summaryKo: "시점 복구(현재 501 restore_not_ready).",
        errors: ["bad_time", "future_time", "out_of_retention", "restore_not_ready", "not_restorable"],
        body: Body({
          target_time: Type.Optional(Type.String({ maxLength: 64 })),
          time: Type.Optional(Type.String({ maxLength: 64 })),
        }),
      },
      (p, id, body) => svc.restore(p, id, body?.target_time ?? body?.time),
    ),
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
