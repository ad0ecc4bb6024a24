import { IdleBody } from "../schemas.js";
import type { RouteDeps } from "./schemas.js";
import { settingRoute } from "./instance-route.js";
import type { Route } from "../../http/route.js";

/** Scale-to-zero of dev databases (src/databases/idle): the instance's idle_stop_seconds. */
export function idleRoutes({ svc, config }: RouteDeps): Route[] {
  return [
    settingRoute(
      {
        method: "PATCH",
        path: "",
        operationId: "updateDatabase",
        summary:
          "Change an instance's settings: idle_stop_seconds (dev only: stopped after that long without client connections, started again by the next connection; null: never).",
        summaryKo: "데이터베이스 설정 변경: idle_stop_seconds(dev 전용, 연결이 없으면 멈추고 다음 연결에 다시 시작).",
        errors: ["stop_not_supported", "database_removed"],
        body: IdleBody,
      },
      config,
      (p, id, body) => svc.setIdleStop(p, id, body.idle_stop_seconds),
    ),
  ];
}
