import { Type, type Static } from "@sinclair/typebox";
import { ApiError } from "../../http/errors.js";

/**
 * Declared checks of a pod (and of a group's members, and a template's pods): `startup` gives a slow starter
 * time before the others count, `readiness` decides whether the edge routes to the replica (and whether a new
 * version may take traffic in a rollout), `liveness` restarts a replica that stops answering. Each is an HTTP
 * GET (path, expected status range, headers), a TCP connect to the pod's port, or a command run in the replica.
 */
const common = {
  interval_seconds: Type.Optional(Type.Number({ minimum: 0.2, maximum: 300, description: "default 5" })),
  timeout_seconds: Type.Optional(Type.Number({ minimum: 0.1, maximum: 60, description: "default 2" })),
  success_threshold: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 100, description: "passes in a row to count as passing; default 1" }),
  ),
  failure_threshold: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 100, description: "failures in a row to count as failing; default 3" }),
  ),
};

export const CheckSchema = Type.Union([
  Type.Object(
    {
      type: Type.Literal("http"),
      path: Type.String({ pattern: "^/", maxLength: 1024 }),
      port: Type.Optional(Type.Integer({ minimum: 1, maximum: 65535, description: "default: the pod's port" })),
      status_min: Type.Optional(Type.Integer({ minimum: 100, maximum: 599, description: "default 200" })),
      status_max: Type.Optional(Type.Integer({ minimum: 100, maximum: 599, description: "default 399" })),
      headers: Type.Optional(
        Type.Record(Type.String({ pattern: "^[A-Za-z0-9-]{1,64}$" }), Type.String({ maxLength: 1024 }), {
          maxProperties: 16,
        }),
      ),
      ...common,
    },
    { additionalProperties: false },
  ),
  Type.Object(
    {
      type: Type.Literal("tcp"),
      port: Type.Optional(Type.Integer({ minimum: 1, maximum: 65535, description: "default: the pod's port" })),
      ...common,
    },
    { additionalProperties: false },
  ),
  Type.Object(
    {
      type: Type.Literal("exec"),
      command: Type.Array(Type.String({ maxLength: 4096 }), { minItems: 1, maxItems: 64 }),
      ...common,
    },
    { additionalProperties: false },
  ),
]);

export const ChecksSchema = Type.Object(
  {
    startup: Type.Optional(CheckSchema),
    readiness: Type.Optional(CheckSchema),
    liveness: Type.Optional(CheckSchema),
  },
  {
    additionalProperties: false,
    description:
      "Declared checks. Without readiness the default is a TCP connect to the pod's port (or the process running, without a port).",
  },
);

export type Check = Static<typeof CheckSchema>;
export type Checks = Static<typeof ChecksSchema>;
export type CheckKind = keyof Checks;
export const CHECK_KINDS: CheckKind[] = ["startup", "readiness", "liveness"];

/** A check with every default filled in. */
export type ResolvedCheck = Check & {
  interval_seconds: number;
  timeout_seconds: number;
  success_threshold: number;
  failure_threshold: number;
};

export function resolveCheck(check: Check): ResolvedCheck {
  return {
    ...check,
    interval_seconds: check.interval_seconds ?? 5,
    timeout_seconds: check.timeout_seconds ?? 2,
    success_threshold: check.success_threshold ?? 1,
    failure_threshold: check.failure_threshold ?? 3,
  };
}

/**
 * The readiness a pod without a declared one gets: today's TCP connect to its port, polled fast while a
 * replica starts (a quarter second), failing only after a run of misses once it serves.
 */
export const DEFAULT_READINESS: ResolvedCheck = {
  type: "tcp",
  interval_seconds: 0.25,
  timeout_seconds: 1,
  success_threshold: 1,
  failure_threshold: 3,
};

/** Refuses checks that cannot work for this pod (an HTTP or TCP check without any port to reach). */
export function validateChecks(checks: Checks | null | undefined, port: number | null | undefined): void {
  if (!checks) return;
  for (const kind of CHECK_KINDS) {
    const c = checks[kind];
    if (!c || c.type === "exec") continue;
    if (!c.port && !port)
      throw new ApiError("invalid_request", `checks.${kind}: a ${c.type} check needs the pod's port (or its own).`);
    if (c.type === "http" && (c.status_min ?? 200) > (c.status_max ?? 399))
      throw new ApiError("invalid_request", `checks.${kind}: status_min is above status_max.`);
    if (c.port && port && c.port !== port)
      throw new ApiError("invalid_request", `checks.${kind}: only the pod's published port (${port}) is reachable.`);
  }
}

export const DeploySchema = Type.Object(
  {
    stop_grace_seconds: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 600,
        description: "after in-flight requests finished: SIGTERM, then this long, then SIGKILL (default 10)",
      }),
    ),
    deadline_seconds: Type.Optional(
      Type.Integer({
        minimum: 3,
        maximum: 3600,
        description: "a new version not ready within this is rolled back (default 300)",
      }),
    ),
  },
  { additionalProperties: false },
);
export type Deploy = Static<typeof DeploySchema>;

/** A group's rollout settings: a member's, and how many members roll at once. */
export const GroupDeploySchema = Type.Object(
  {
    ...DeploySchema.properties,
    max_surge: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 50, description: "members rolled at once (default 1)" }),
    ),
    max_unavailable: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 50,
        description:
          "members allowed below serving at once (default 0); each member keeps its old replica serving until the new one is ready, so this only widens the batch",
      }),
    ),
  },
  { additionalProperties: false },
);
export type GroupDeploy = Static<typeof GroupDeploySchema>;
export const DEFAULT_STOP_GRACE_SECONDS = 10;
export const DEFAULT_DEADLINE_SECONDS = 300;
