import { Type, type TSchema } from "@sinclair/typebox";
import { callerOf } from "../../auth/principal.js";
import { Nullable, Timestamp } from "../../http/schemas.js";
import { route, type Route } from "../../http/route.js";
import type { LegacyService } from "../legacy-service.js";
import { Params } from "./schemas.js";

const Metrics = Type.Object({
  deployment_id: Type.String(),
  pod_id: Type.String(),
  generation: Type.Integer(),
  image: Type.String(),
  state: Type.String(),
  restarts: Type.Integer(),
  cpu_percent: Nullable(Type.Number()),
  memory_bytes: Nullable(Type.Integer()),
  memory_limit_bytes: Nullable(Type.Integer()),
  sampled_at: Timestamp,
});
const Sample = Type.Object({
  deployment_id: Type.String(),
  pod_id: Type.String(),
  generation: Type.Integer(),
  state: Type.String(),
  reason: Type.String(),
  created_at: Timestamp,
  serving_at: Nullable(Timestamp),
  log_lines: Type.Array(Type.String()),
});

/** Legacy (deprecated in the OpenAPI document): a pod's rollouts as "deployments", two reads of one rollout. */
export function legacyRoutes(legacy: LegacyService): Route[] {
  const reads: { part: "metrics" | "sample"; name: string; summary: string; summaryKo: string; schema: TSchema }[] = [
    {
      part: "metrics",
      name: "Metrics",
      summary:
        "Legacy: metrics of a pod's rollout (id: rollout id, or a pod id for its newest): CPU, memory, restarts.",
      summaryKo: "배포(롤아웃) 지표(레거시): CPU, 메모리, 재시작.",
      schema: Metrics,
    },
    {
      part: "sample",
      name: "Sample",
      summary: "Legacy: a rollout's state and its last 20 log lines.",
      summaryKo: "배포(롤아웃) 샘플(레거시): 상태와 마지막 로그.",
      schema: Sample,
    },
  ];
  return reads.map(({ part, name, summary, summaryKo, schema }) =>
    route({
      method: "GET",
      url: `/v1/deployments/:id/${part}`,
      operationId: `getDeployment${name}`,
      tags: ["pods"],
      summary,
      summaryKo,
      auth: { scope: "pods:read" },
      document: { deprecated: true },
      params: Params,
      response: { 200: schema },
      handler: async (request) => legacy[part](callerOf(request), request.params.id),
    }),
  );
}
