import { Type, type Static, type TObject, type TSchema } from "@sinclair/typebox";
import { callerOf, type Principal } from "../../auth/principal.js";
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

/**
 * The release routes a pod and a pod group both have: the app's numbered releases, and a rollback to one of them
 * through the safe rollout (202 with the app as it is then). One declaration, so the two stay the same API.
 */
export function appReleaseRoutes<B extends TObject>(app: {
  /** the app's collection, e.g. /v1/pods; the routes are under `${url}/:id` */
  url: string;
  /** the operation ids' noun: "Pod" gives listPodReleases and rollbackPod */
  noun: string;
  /** what the list's summaries call the app ("pod" / "팟") */
  called: { en: string; ko: string };
  /** the app's releases in their view, newest first */
  list: (caller: Principal, id: string) => Promise<unknown[]>;
  rollback: {
    summary: string;
    summaryKo: string;
    body: B;
    /** the app as answered */
    schema: TSchema;
    /** rolls back as the body says; the app in its view */
    run: (caller: Principal, id: string, body: Static<B>) => Promise<unknown>;
  };
}): Route[] {
  return [
    route({
      method: "GET",
      url: `${app.url}/:id/releases`,
      operationId: `list${app.noun}Releases`,
      tags,
      summary: `The ${app.called.en}'s numbered releases, newest first: what changed, who, when, and the outcome.`,
      summaryKo: `${app.called.ko}의 릴리스 목록(최신순).`,
      auth: read,
      params: Params,
      response: { 200: Type.Array(Release) },
      handler: async (request) => app.list(callerOf(request), request.params.id),
    }),
    route({
      method: "POST",
      url: `${app.url}/:id/rollback`,
      operationId: `rollback${app.noun}`,
      tags,
      summary: app.rollback.summary,
      summaryKo: app.rollback.summaryKo,
      auth: write,
      admits: true,
      errors: ["conflict", "bad_size", "image_forbidden", "provision_failed", "runtime_unavailable"],
      params: Params,
      body: app.rollback.body as TObject,
      response: { 202: app.rollback.schema },
      handler: async (request, reply) =>
        reply.code(202).send(await app.rollback.run(callerOf(request), request.params.id, request.body as Static<B>)),
    }),
  ];
}

/** A pod's releases, and a rollback to one of them through the safe rollout. */
export function releaseRoutes({ pods, urls }: RouteDeps, releases: ReleasesService): Route[] {
  return appReleaseRoutes({
    url: "/v1/pods",
    noun: "Pod",
    called: { en: "pod", ko: "팟" },
    list: async (caller, id) => (await releases.list(caller, id)).releases.map((r) => releaseView(r, r)),
    rollback: {
      summary:
        "Return to an earlier release: a new release with its spec, rolled out safely (202; the old version serves until the new one is ready).",
      summaryKo: "이전 릴리스로 되돌립니다(안전한 롤아웃).",
      body: Body({ release: Type.Integer({ minimum: 1 }) }),
      schema: Pod,
      run: async (caller, id, { release }) => {
        const pod = await releases.rollback(caller, id, release);
        return podView(pod, pods.envOf(pod), urls, pods.secretEnvOf(pod));
      },
    },
  });
}
