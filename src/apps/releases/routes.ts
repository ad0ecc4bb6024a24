import { Type } from "@sinclair/typebox";
import { callerOf } from "../../auth/principal.js";
import { Body, Nullable, Timestamp } from "../../http/schemas.js";
import { route, type Route } from "../../http/route.js";
import { Params, Pod, read, tags, write } from "../routes/schemas.js";
import { podView } from "../view.js";
import type { RouteDeps } from "../routes/schemas.js";
import type { ReleasesService } from "./service.js";
import type { ReleaseRecord, ReleaseRow } from "./repo.js";

export const Release = Type.Object({
  number: Type.Integer(),
  image: Type.String(),
  port: Nullable(Type.Integer()),
  command: Nullable(Type.Array(Type.String())),
  size: Type.String(),
  changed: Type.Array(Type.String(), { description: "what this release changed (empty for the first)" }),
  description: Type.String(),
  created_by: Nullable(Type.String({ description: "the account that made the change" })),
  outcome: Type.Union(
    ["pending", "serving", "superseded", "rolled_back", "failed"].map((s) => Type.Literal(s)),
    { description: "pending: rolling out; rolled_back: it failed its checks and the pod went back" },
  ),
  outcome_reason: Nullable(Type.String()),
  created_at: Timestamp,
  ended_at: Nullable(Timestamp),
});

/** A release as the API shows it: what it runs (a pod's own fields, a group's spec) and its record. */
export const releaseView = (r: ReleaseRecord, runs: Pick<ReleaseRow, "image" | "port" | "command" | "size">) => ({
  number: r.number,
  image: runs.image,
  port: runs.port,
  command: runs.command,
  size: runs.size,
  changed: r.changed,
  description: r.description,
  created_by: r.created_by,
  outcome: r.outcome,
  outcome_reason: r.outcome_reason,
  created_at: r.created_at.toISOString(),
  ended_at: r.ended_at?.toISOString() ?? null,
});

/** A pod's releases, and a rollback to one of them through the safe rollout. */
export function releaseRoutes({ pods, urls }: RouteDeps, releases: ReleasesService): Route[] {
  return [
    route({
      method: "GET",
      url: "/v1/pods/:id/releases",
      operationId: "listPodReleases",
      tags,
      summary: "The pod's numbered releases, newest first: what changed, who, when, and the outcome.",
      summaryKo: "팟의 릴리스 목록(최신순).",
      auth: read,
      params: Params,
      response: { 200: Type.Array(Release) },
      handler: async (request) =>
        (await releases.list(callerOf(request), request.params.id)).releases.map((r) => releaseView(r, r)),
    }),
    route({
      method: "POST",
      url: "/v1/pods/:id/rollback",
      operationId: "rollbackPod",
      tags,
      summary:
        "Return to an earlier release: a new release with its spec, rolled out safely (202; the old version serves until the new one is ready).",
      summaryKo: "이전 릴리스로 되돌립니다(안전한 롤아웃).",
      auth: write,
      admits: true,
      errors: ["conflict", "bad_size", "image_forbidden", "provision_failed", "runtime_unavailable"],
      params: Params,
      body: Body({ release: Type.Integer({ minimum: 1 }) }),
      response: { 202: Pod },
      handler: async (request, reply) => {
        const pod = await releases.rollback(callerOf(request), request.params.id, request.body.release);
        return reply.code(202).send(podView(pod, pods.envOf(pod), urls, pods.secretEnvOf(pod)));
      },
    }),
  ];
}
