import { databaseView } from "../view.js";
import { IdleBody } from "../schemas.js";
import { caller, Instance, Params, tags, write, type RouteDeps } from "./schemas.js";
import { route, type Route } from "../../http/route.js";

/** Scale-to-zero of dev databases (src/databases/idle): the instance's idle_stop_seconds. */
export function idleRoutes({ svc, config }: RouteDeps): Route[] {
  return [
    route({
      method: "PATCH",
      url: "/v1/databases/:id",
      operationId: "updateDatabase",
      tags,
      summary:
        "Change an instance's settings: idle_stop_seconds (dev only: stopped after that long without client connections, started again by the next connection; null: never).",
      summaryKo: "데이터베이스 설정 변경: idle_stop_seconds(dev 전용, 연결이 없으면 멈추고 다음 연결에 다시 시작).",
      auth: write,
      errors: ["stop_not_supported", "database_removed"],
      params: Params,
      body: IdleBody,
      response: { 200: Instance },
      handler: async (request) =>
        databaseView(await svc.setIdleStop(caller(request), request.params.id, request.body.idle_stop_seconds), config),
    }),
  ];
}
