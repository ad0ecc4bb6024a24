import { Type } from "@sinclair/typebox";
import { Nullable, Timestamp } from "../../http/schemas.js";
import type { PodsService } from "../service.js";
import { SecretEnvView } from "../secrets/schemas.js";
import { ChecksSchema } from "../checks/spec.js";

export const CheckStatus = Type.Object({
  generation: Type.Integer(),
  state: Type.Union([Type.Literal("pending"), Type.Literal("passing"), Type.Literal("failing")]),
  last_failure: Nullable(Type.Object({ reason: Type.String(), at: Timestamp })),
  checked_at: Timestamp,
});

// the request bodies' parts live beside the bodies (bodies.ts), which the services' input types come from
import { Command, Env, Image, SLUG, VolumeMount } from "./bodies.js";
export { Command, Env, Image, SLUG, VolumeMount };

export const tags = ["pods"];
export const read = { scope: "pods:read", instance: { param: "id" } } as const;
export const write = { scope: "pods:write", instance: { param: "id" } } as const;
export const Params = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64, description: "id or slug" }) });

/** What every apps route file gets from the module. */
export interface RouteDeps {
  pods: PodsService;
  urls: { appsDomain: string; edgePort: number };
}

/** What a pod and a pod group show first: their names and what they run. */
export const RunFields = {
  id: Type.String(),
  name: Type.String(),
  slug: Type.String(),
  image: Type.String(),
  port: Nullable(Type.Integer()),
  command: Nullable(Type.Array(Type.String())),
};

export const Pod = Type.Object({
  ...RunFields,
  env: Type.Record(Type.String(), Type.String()),
  secret_env: SecretEnvView,
  size: Type.String(),
  gpu: Nullable(Type.String()),
  volumes: Type.Array(Type.Object({ volume_id: Type.String(), path: Type.String() })),
  databases: Type.Array(Type.String()),
  group_id: Nullable(Type.String()),
  template_id: Nullable(Type.String()),
  // unknown: the pod's external host (src/orgs/hosts) is offline, so what its containers do is not known;
  // pending: accepted, waiting for a volume still being created (state_reason "waiting for volume <name>")
  state: Type.Union(
    ["pending", "creating", "running", "stopped", "failed", "removed", "unknown"].map((s) => Type.Literal(s)),
  ),
  desired_state: Type.String({
    description:
      "running, stopped (by its owner or billing), idle_stopped (after idle_stop_seconds without requests: the next request through the edge starts it), removed",
  }),
  state_reason: Nullable(Type.String()),
  idle_stop_seconds: Nullable(
    Type.Integer({ description: "scale-to-zero: stopped after this long without requests; null: never" }),
  ),
  url: Type.String({ description: "the pod at the edge: http://<slug>.<APPS_DOMAIN>[:EDGE_PORT]" }),
  address: Nullable(Type.String({ description: "local mode: 127.0.0.1:<port> the serving replica listens on" })),
  generation: Type.Integer(),
  serving_generation: Nullable(Type.Integer()),
  restart_count: Type.Integer(),
  cleaned_containers: Type.Integer({
    description:
      "containers the platform had to clean up for this pod (left behind by an interrupted rollout or removal)",
  }),
  host_id: Nullable(Type.String()),
  checks: Nullable(ChecksSchema),
  check_status: Type.Record(Type.String(), CheckStatus, {
    description: "per check (startup, readiness, liveness): its state and the last failure's reason",
  }),
  ready: Type.Boolean({ description: "the serving replica passes readiness (the edge routes to it)" }),
  deploy: Type.Object({ stop_grace_seconds: Type.Integer(), deadline_seconds: Type.Integer() }),
  release: Type.Integer({ description: "the release the pod runs (GET /v1/pods/{id}/releases)" }),
  rollout: Type.Object({
    state: Type.Union([Type.Literal("rolling"), Type.Literal("done"), Type.Literal("rollback")], {
      description:
        "rolling: a new generation is being brought up; rollback: the last new release failed and was rolled back",
    }),
    rollback: Nullable(
      Type.Object({
        from_release: Type.Integer(),
        to_release: Type.Integer(),
        reason: Type.String(),
        log_lines: Type.Array(Type.String(), { description: "the failed replica's last log lines" }),
        at: Timestamp,
      }),
    ),
  }),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const ExecBody = Type.Object(
  {
    command: Command,
    timeout_s: Type.Optional(Type.Integer({ minimum: 1, maximum: 300, default: 30 })),
  },
  { additionalProperties: false },
);
export const ExecResult = Type.Object({
  exit_code: Type.Integer(),
  stdout: Type.String(),
  stderr: Type.String(),
  truncated: Type.Boolean({ description: "output was cut at 64 KiB per stream" }),
  timed_out: Type.Boolean(),
});
export const Logs = Type.Object({ lines: Type.Array(Type.String()) });
export const TailQuery = Type.Object({
  tail: Type.Optional(Type.Integer({ minimum: 1, maximum: 5000, default: 100 })),
});
