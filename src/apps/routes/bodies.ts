import { Type } from "@sinclair/typebox";
import { Body, Nullable } from "../../http/schemas.js";
import { SecretEnv } from "../secrets/schemas.js";
import { ChecksSchema, DeploySchema, GroupDeploySchema } from "../checks/spec.js";

/**
 * The request bodies of pods and pod groups, and their parts. The services take their static types (types.ts
 * `PodInput`, groups/service.ts `GroupInput`): what a route accepts is what a service is given. Nothing here imports
 * a service, so the types can flow back without a cycle.
 */
export const SLUG = "^[a-z0-9][a-z0-9-]{1,38}[a-z0-9]$";
export const Env = Type.Record(
  Type.String({ pattern: "^[A-Za-z_][A-Za-z0-9_]{0,127}$" }),
  Type.String({ maxLength: 32768 }),
  {
    description: "environment variables; names are letters, digits and _",
    additionalProperties: false,
  },
);
export const Command = Type.Array(Type.String({ maxLength: 4096 }), { minItems: 1, maxItems: 64 });
export const Image = Type.String({ minLength: 1, maxLength: 512, pattern: "^[a-zA-Z0-9][a-zA-Z0-9._/:@-]*$" });
export const VolumeMount = Type.Object(
  {
    volume: Type.String({ minLength: 1, maxLength: 64, description: "volume id or name" }),
    path: Type.String({ minLength: 2, maxLength: 255 }),
  },
  { additionalProperties: false },
);

/** Scale-to-zero (src/apps/idle): stopped after this long without requests through the edge, woken by the next. */
export const IdleStop = Nullable(
  Type.Integer({
    minimum: 1,
    maximum: 2_592_000,
    description:
      "stop after this many seconds without requests through the edge (at least APPS_IDLE_MIN_SECONDS, 60 by default); the next request starts it again and is answered; null: never stop",
  }),
);

/** POST /v1/pods: a pod as a request describes it (also what a template or a group member expands to). */
export const PodCreateBody = Body({
  name: Type.Optional(Type.String({ pattern: SLUG, minLength: 3, maxLength: 40 })),
  slug: Type.Optional(Type.String({ pattern: SLUG, minLength: 3, maxLength: 40 })),
  template: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: "pod template id or name" })),
  image: Type.Optional(Image),
  port: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 65535 }))),
  command: Type.Optional(Nullable(Command)),
  env: Type.Optional(Env),
  secret_env: Type.Optional(SecretEnv),
  size: Type.Optional(
    Type.String({ minLength: 1, maxLength: 40, description: "nano (free), micro, or a SKU id of /v1/gpus" }),
  ),
  volumes: Type.Optional(Type.Array(VolumeMount, { maxItems: 8 })),
  // issue 29: declared checks and rollout settings (src/apps/rollout/README.md)
  checks: Type.Optional(Nullable(ChecksSchema)),
  deploy: Type.Optional(DeploySchema),
  databases: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 8 })),
  idle_stop_seconds: Type.Optional(IdleStop),
  // organization external hosts (src/orgs/hosts): company pods only
  host_id: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 64,
      description: "company pods: one of the organization's external hosts (GET /v1/org/hosts)",
    }),
  ),
  host_labels: Type.Optional(
    Type.Record(Type.String({ maxLength: 63 }), Type.String({ maxLength: 255 }), {
      maxProperties: 16,
      description: "company pods: any online external host of the organization carrying all these labels",
    }),
  ),
});

/** What a rolling update of a pod, or of a group's members, may change of what they run. */
const RunChange = {
  image: Type.Optional(Image),
  env: Type.Optional(Env),
  secret_env: Type.Optional(SecretEnv),
  size: Type.Optional(Type.String({ minLength: 1, maxLength: 40 })),
  port: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 65535 }))),
  command: Type.Optional(Nullable(Command)),
  checks: Type.Optional(Nullable(ChecksSchema)),
};

/** PATCH /v1/pods/{id}: what a rolling update may change. */
export const PodPatchBody = Body({
  ...RunChange,
  deploy: Type.Optional(DeploySchema),
  idle_stop_seconds: Type.Optional(IdleStop),
});

const ReplicaCount = Type.Integer({ minimum: 1, maximum: 20 });
const TargetCpu = (extra: { default?: number } = {}) =>
  Type.Integer({
    minimum: 10,
    maximum: 100,
    description: "average CPU of the members, percent of what their size allots, the autoscaler keeps them near",
    ...extra,
  });

/** POST /v1/pod-groups. */
export const GroupCreateBody = Body({
  name: Type.String({ pattern: SLUG, minLength: 3, maxLength: 40 }),
  slug: Type.Optional(Type.String({ pattern: SLUG, minLength: 3, maxLength: 40 })),
  image: Image,
  port: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 65535 }))),
  command: Type.Optional(Nullable(Command)),
  env: Type.Optional(Env),
  secret_env: Type.Optional(SecretEnv),
  size: Type.Optional(Type.String({ minLength: 1, maxLength: 40, description: "nano (free), micro, or a SKU" })),
  databases: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 8 })),
  checks: Type.Optional(Nullable(ChecksSchema)),
  deploy: Type.Optional(GroupDeploySchema),
  replica_min: ReplicaCount,
  replica_max: ReplicaCount,
  target_cpu_percent: Type.Optional(TargetCpu({ default: 70 })),
  idle_stop_seconds: Type.Optional(IdleStop),
});

/** PATCH /v1/pod-groups/{id}. */
export const GroupPatchBody = Body({
  replica_min: Type.Optional(ReplicaCount),
  replica_max: Type.Optional(ReplicaCount),
  target_cpu_percent: Type.Optional(TargetCpu()),
  ...RunChange,
  deploy: Type.Optional(GroupDeploySchema),
  idle_stop_seconds: Type.Optional(IdleStop),
});
