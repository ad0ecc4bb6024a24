import { Type } from "@sinclair/typebox";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { FastifyInstance } from "fastify";
import type { ErrorCode } from "../../http/errors.js";
import type { HaAction } from "../service.js";
import { Accepted, caller, Params, read, tags, write, type RouteDeps } from "./schemas.js";

const HaStatus = Type.Object({ enabled: Type.Boolean(), standby: Type.Unknown() });
const HA_ERRORS: ErrorCode[] = [
  "not_found",
  "database_removed",
  "ha_not_supported",
  "ha_not_enabled",
  "not_running",
  "deploy_rule_violation",
];

/** High availability: a streaming standby, its status, rebuild and switchover. */
export function haRoutes(app: FastifyInstance, { svc }: RouteDeps): void {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();

  r.get(
    "/v1/databases/:id/ha",
    {
      config: { auth: read, errors: ["not_found"], summaryKo: "대기 서버(HA) 상태와 복제 지연." },
      schema: {
        operationId: "getDatabaseHa",
        tags,
        summary: "Standby status with replication lag.",
        params: Params,
        response: { 200: HaStatus },
      },
    },
    async (request) => svc.haStatus(caller(request), request.params.id),
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
      path: "",
      action: "ha_enable",
      operationId: "enableDatabaseHa",
      summary: "Enable a streaming standby (basic and above).",
      summaryKo: "스트리밍 대기 서버를 켭니다(basic 이상).",
    },
    {
      method: "DELETE",
      path: "",
      action: "ha_disable",
      operationId: "disableDatabaseHa",
      summary: "Disable the standby.",
      summaryKo: "대기 서버를 끕니다.",
    },
    {
      method: "POST",
      path: "/rebuild",
      action: "ha_rebuild",
      operationId: "rebuildDatabaseStandby",
      summary: "Rebuild the standby.",
      summaryKo: "대기 서버를 다시 만듭니다.",
    },
    {
      method: "POST",
      path: "/switchover",
      action: "ha_switchover",
      operationId: "switchoverDatabase",
      summary: "Promote the standby; the old primary becomes the standby; URLs keep working.",
      summaryKo: "대기 서버를 주 서버로 승격합니다. URL은 그대로입니다.",
    },
  ];
  for (const a of actions) {
    r.route({
      method: a.method,
      url: `/v1/databases/:id/ha${a.path}`,
      config: { auth: write, errors: HA_ERRORS, summaryKo: a.summaryKo },
      schema: { operationId: a.operationId, tags, summary: a.summary, params: Params, response: { 202: Accepted } },
      handler: async (request, reply) =>
        reply.code(202).send({ command_id: (await svc.ha(caller(request), request.params.id, a.action)).commandId }),
    });
  }
}
