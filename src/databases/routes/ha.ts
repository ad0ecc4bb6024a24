import { Type } from "@sinclair/typebox";
import type { ErrorCode } from "../../http/errors.js";
import type { HaAction } from "../service.js";
import type { RouteDeps } from "./schemas.js";
import { commandRoute, readRoute } from "./instance-route.js";
import type { Route } from "../../http/route.js";

const HaStatus = Type.Object({ enabled: Type.Boolean(), standby: Type.Unknown() });
const HA_ERRORS: ErrorCode[] = ["database_removed", "ha_not_supported", "ha_not_enabled", "not_running"];

/** High availability: a streaming standby, its status, rebuild and switchover. */
export function haRoutes({ svc }: RouteDeps): Route[] {
  const status = readRoute(
    {
      path: "/ha",
      operationId: "getDatabaseHa",
      summary: "Standby status with replication lag.",
      summaryKo: "대기 서버(HA) 상태와 복제 지연.",
      schema: HaStatus,
    },
    (p, id) => svc.haStatus(p, id),
  );

  const actions: {
    method: "POST" | "DELETE";
    path: string;
    action: HaAction;
    operationId: string;
    summary: string;
    summaryKo: string;
  }[] = [
    {
      method: "POST",
      path: "/ha",
      action: "ha_enable",
      operationId: "enableDatabaseHa",
      summary: "Enable a streaming standby (basic and above).",
      summaryKo: "스트리밍 대기 서버를 켭니다(basic 이상).",
    },
    {
      method: "DELETE",
      path: "/ha",
      action: "ha_disable",
      operationId: "disableDatabaseHa",
      summary: "Disable the standby.",
      summaryKo: "대기 서버를 끕니다.",
    },
    {
      method: "POST",
      path: "/ha/rebuild",
      action: "ha_rebuild",
      operationId: "rebuildDatabaseStandby",
      summary: "Rebuild the standby.",
      summaryKo: "대기 서버를 다시 만듭니다.",
    },
    {
      method: "POST",
      path: "/ha/switchover",
      action: "ha_switchover",
      operationId: "switchoverDatabase",
      summary: "Promote the standby; the old primary becomes the standby; URLs keep working.",
      summaryKo: "대기 서버를 주 서버로 승격합니다. URL은 그대로입니다.",
    },
  ];
  return [
    status,
    ...actions.map(({ action, ...change }) =>
      commandRoute(
        // only enabling adds a standby: it passes admission like an update (organization rule features.ha)
        { ...change, admits: action === "ha_enable", errors: HA_ERRORS },
        (p, id) => svc.ha(p, id, action),
      ),
    ),
  ];
}
