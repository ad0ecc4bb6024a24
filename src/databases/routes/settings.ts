import { Type } from "@sinclair/typebox";
import { Body } from "../../http/schemas.js";
import { ComputeBody, StorageBody } from "../schemas.js";
import type { RouteDeps } from "./schemas.js";
import { commandRoute, settingRoute } from "./instance-route.js";
import type { Route } from "../../http/route.js";

/** Settings of an instance: network allow-list, client groups, autoscale, label, extensions. */
export function settingsRoutes({ svc, config }: RouteDeps): Route[] {
  return [
    commandRoute(
      {
        method: "PATCH",
        path: "/allowlist",
        operationId: "setDatabaseAllowlist",
        summary: "CIDR allow-list; an empty array allows all; the platform's own apps are always allowed.",
        summaryKo: "접속 허용 IP 목록(CIDR). 빈 배열은 모두 허용.",
        errors: ["database_removed", "bad_cidr"],
        body: Body({
          allowlist: Type.Array(
            Type.Object(
              { cidr: Type.String({ maxLength: 64 }), label: Type.Optional(Type.String({ maxLength: 100 })) },
              { additionalProperties: false },
            ),
            { maxItems: 100 },
          ),
        }),
      },
      (p, id, body) => svc.setAllowlist(p, id, body.allowlist),
    ),
    settingRoute(
      {
        method: "POST",
        path: "/authorize-clients",
        operationId: "authorizeDatabaseClients",
        summary: "Authorize client security groups.",
        summaryKo: "클라이언트 보안 그룹을 허가합니다.",
        body: Body({ security_groups: Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 50 }) }),
      },
      config,
      (p, id, body) => svc.authorizeClients(p, id, body.security_groups),
    ),
    // the two autoscale settings, alike but for their body
    settingRoute(
      {
        method: "PATCH",
        path: "/compute",
        operationId: "setDatabaseCompute",
        summary: "Compute autoscale settings.",
        summaryKo: "컴퓨트 자동 확장 설정.",
        body: ComputeBody,
      },
      config,
      (p, id, body) => svc.setCompute(p, id, body),
    ),
    settingRoute(
      {
        method: "PATCH",
        path: "/storage",
        operationId: "setDatabaseStorage",
        summary: "Storage autoscale settings.",
        summaryKo: "스토리지 자동 확장 설정.",
        body: StorageBody,
      },
      config,
      (p, id, body) => svc.setStorage(p, id, body),
    ),
    settingRoute(
      {
        method: "PATCH",
        path: "/rename",
        operationId: "renameDatabase",
        summary: "Change the label (the slug and URLs stay).",
        summaryKo: "표시 이름(label)을 바꿉니다.",
        body: Body({ label: Type.String({ minLength: 1, maxLength: 100 }) }),
      },
      config,
      (p, id, body) => svc.rename(p, id, body.label),
    ),
    commandRoute(
      {
        method: "POST",
        path: "/extensions",
        operationId: "ensureDatabaseExtensions",
        summary: "Ensure default extensions and add allow-listed ones.",
        summaryKo: "기본 확장을 보장하고 허용된 확장을 추가합니다.",
        errors: ["database_removed", "extension_not_allowed"],
        body: Body({ names: Type.Optional(Type.Array(Type.String({ maxLength: 64 }), { maxItems: 50 })) }),
      },
      (p, id, body) => svc.extensions(p, id, body?.names ?? []),
    ),
  ];
}
