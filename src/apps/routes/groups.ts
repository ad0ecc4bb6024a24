import { Type } from "@sinclair/typebox";
import { SecretEnvView } from "../secrets/schemas.js";
import { Nullable, Timestamp } from "../../http/schemas.js";
import type { Route } from "../../http/route.js";
import { resourceRoutes } from "../../http/resource-routes.js";
import type { GroupsService, GroupWithMembers } from "../groups/service.js";
import { groupView } from "../groups/view.js";
import { Params, RunFields, tags } from "./schemas.js";
import { GroupCreateBody, GroupPatchBody } from "./bodies.js";
import { ChecksSchema, GroupDeploySchema } from "../checks/spec.js";

export const PodGroup = Type.Object({
  ...RunFields,
  checks: Nullable(ChecksSchema),
  deploy: GroupDeploySchema,
  rollout: Nullable(
    Type.Object(
      {
        state: Type.Union(["rolling", "done", "rolling_back", "rolled_back"].map((s) => Type.Literal(s))),
        reason: Nullable(Type.String()),
        started_at: Timestamp,
      },
      {
        description:
          "the last spec change rolled over the members a batch at a time; rolled_back: a member's new release failed",
      },
    ),
  ),
  env: Type.Record(Type.String(), Type.String()),
  secret_env: SecretEnvView,
  size: Type.String(),
  databases: Type.Array(Type.String()),
  replica_min: Type.Integer(),
  replica_max: Type.Integer(),
  target_cpu_percent: Type.Integer(),
  desired_replicas: Type.Integer({
    description: "members the autoscaler wants now, within [replica_min, replica_max]",
  }),
  replicas: Type.Array(
    Type.Object({
      id: Type.String({ description: "the member pod's id (GET /v1/pods/{id})" }),
      slug: Type.String(),
      state: Type.String(),
      address: Nullable(Type.String()),
      host_id: Nullable(Type.String()),
    }),
  ),
  state: Type.Union(
    ["creating", "running", "stopped", "idle_stopped", "failed", "removed"].map((s) => Type.Literal(s)),
    {
      description:
        "running once a member runs; stopped while billing holds every member (overdue); idle_stopped: stopped after idle_stop_seconds without requests, the next request through the edge starts it; failed when every member failed",
    },
  ),
  idle_stop_seconds: Nullable(
    Type.Integer({ description: "scale-to-zero: stopped after this long without requests; null: never" }),
  ),
  scale_hold: Nullable(
    Type.String({ description: "why autoscaling does not grow the group now (a spend cap reached); null when it may" }),
  ),
  release: Type.Integer({ description: "the release the members' spec is at (GET /v1/pod-groups/{id}/releases)" }),
  url: Type.String({ description: "the group at the edge: http://<slug>.<APPS_DOMAIN>[:EDGE_PORT]" }),
  created_at: Timestamp,
});

const SpecErrors = ["bad_size", "bad_image", "image_forbidden", "provision_failed"] as const;

/** Pod groups: autoscaled members of one spec; a group's id covers its members for instance-limited keys. */
export function groupRoutes({
  groups,
  urls,
}: {
  groups: GroupsService;
  urls: { appsDomain: string; edgePort: number };
}): Route[] {
  const view = (g: GroupWithMembers) => groupView(g, groups.envOf(g.group), urls, groups.secretEnvOf(g.group));

  return resourceRoutes({
    name: "PodGroup",
    url: "/v1/pod-groups",
    tags,
    params: Params,
    scope: "pods",
    instances: true,
    schema: PodGroup,
    view,
    service: groups,
    create: {
      summary:
        "Create an autoscaled pod group (201): replica_min member pods start now; the autoscaler keeps the members' average CPU near target_cpu_percent between replica_min and replica_max (a member removed on its own is replaced), and stops growing at the account or app spend cap.",
      summaryKo: "자동 확장되는 팟 그룹을 만듭니다(replica_min개의 팟으로 시작).",
      admits: true,
      errors: ["bad_slug", "slug_taken", "not_found", "runtime_unavailable", ...SpecErrors],
      validationCodes: { "/slug": "bad_slug", "/name": "bad_slug", "/size": "bad_size", "/image": "bad_image" },
      body: GroupCreateBody,
    },
    list: {
      summary: "The caller's pod groups, removed ones excluded; instance-limited keys see only their groups.",
      summaryKo: "팟 그룹 목록(삭제된 것 제외).",
    },
    get: {
      summary: "One pod group by id or slug: its members, desired replicas and why it holds (scale_hold).",
      summaryKo: "팟 그룹 하나(id 또는 slug)와 그 팟들.",
    },
    update: {
      summary:
        "Change replica bounds and the CPU target, or the members' image, env, size, port or command: each member rolls (a rolling update per pod).",
      summaryKo: "복제 수 범위, 목표 CPU, 이미지·환경 변수·크기를 바꿉니다(팟마다 롤링 업데이트).",
      admits: true,
      errors: ["runtime_unavailable", ...SpecErrors],
      validationCodes: { "/size": "bad_size", "/image": "bad_image" },
      body: GroupPatchBody,
    },
    remove: {
      summary: "Remove the group and its member pods (their containers go). 202 with the group (state removed).",
      summaryKo: "팟 그룹과 그 팟들을 지웁니다.",
      status: 202,
    },
  });
}
