import { Type } from "@sinclair/typebox";
import type { FastifyRequest } from "fastify";
import type { Principal } from "../auth/principal.js";
import { Body, Nullable, Timestamp } from "../http/schemas.js";
import { route, type Route } from "../http/route.js";
import { resourceRoutes } from "../http/resource-routes.js";
import type { SandboxRow } from "./repo.js";
import type { SandboxesState } from "./service.js";
import { DEFAULT_SANDBOX_IMAGE, OUTPUT_LIMIT } from "./service.js";

const tags = ["sandboxes"];
const write = { scope: "sandboxes:write", instance: { param: "id" } } as const;
const caller = (request: FastifyRequest): Principal => request.principal!;

/** an image reference: [registry/]path[:tag][@digest] */
const IMAGE = "^[A-Za-z0-9][A-Za-z0-9._/:@+-]{0,254}$";

const Sandbox = Type.Object({
  id: Type.String(),
  state: Type.String({ description: "running, expired (its time ran out) or removed (deleted)" }),
  state_reason: Nullable(Type.String()),
  image: Type.String(),
  network: Type.Boolean({
    description: "false: no network interface at all; true: the owner's network (its pods too; no other owner's)",
  }),
  timeout_s: Type.Integer(),
  expires_at: Timestamp,
  created_at: Timestamp,
});
const Params = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64, description: "sandbox id" }) });

export function sandboxView(row: SandboxRow) {
  return {
    id: row.id,
    state: row.shown_state ?? row.state,
    state_reason: row.state_reason,
    image: row.image,
    network: row.network,
    timeout_s: row.timeout_s,
    expires_at: row.expires_at.toISOString(),
    created_at: row.created_at.toISOString(),
  };
}

/** Sandboxes: short-lived isolated containers for running code. Container work happens in the service. */
export function sandboxRoutes(state: SandboxesState): Route[] {
  const svc = state.service;
  const unavailable = ["runtime_unavailable"] as const;

  return [
    ...resourceRoutes({
      name: "Sandbox",
      plural: "Sandboxes",
      url: "/v1/sandboxes",
      tags,
      params: Params,
      scope: "sandboxes",
      instances: true,
      schema: Sandbox,
      view: sandboxView,
      service: svc,
      create: {
        summary: `Start a sandbox: an isolated container that is removed when timeout_s runs out (even across a platform restart). Without image: ${DEFAULT_SANDBOX_IMAGE} (busybox). No network unless network is true.`,
        summaryKo: "격리된 단기 컨테이너(샌드박스)를 만듭니다.",
        admits: true,
        errors: ["bad_image", "image_forbidden", "provision_failed", "runtime_failed", ...unavailable],
        validationCodes: { "/image": "bad_image" },
        body: Body({
          image: Type.Optional(Type.String({ pattern: IMAGE, maxLength: 255 })),
          timeout_s: Type.Optional(Type.Integer({ minimum: 10, maximum: 3600, default: 300 })),
          network: Type.Optional(Type.Boolean({ default: false })),
        }),
      },
      list: {
        summary: "The caller's running sandboxes and those that expired in the last day, newest first.",
        summaryKo: "실행 중이거나 최근 하루 안에 끝난 샌드박스 목록.",
      },
      get: { summary: "One sandbox, deleted and expired ones included.", summaryKo: "샌드박스 하나." },
      remove: {
        summary: "Remove the sandbox's container at once; answers the sandbox in state removed.",
        summaryKo: "샌드박스를 지웁니다(컨테이너 삭제).",
        status: 200,
      },
    }),
    route({
      method: "POST",
      url: "/v1/sandboxes/:id/exec",
      operationId: "execInSandbox",
      tags,
      summary: `Run a command (argv, no shell unless you call one) in the sandbox. stdout and stderr are each cut at ${OUTPUT_LIMIT} bytes; the command is killed at timeout_s or when the sandbox expires, whichever comes first (exit_code 124, timed_out true).`,
      summaryKo: "샌드박스 안에서 명령을 실행합니다(출력과 시간 제한).",
      auth: write,
      errors: ["conflict", "runtime_failed", ...unavailable],
      params: Params,
      body: Body({
        command: Type.Array(Type.String({ maxLength: 65536 }), { minItems: 1, maxItems: 1024 }),
        timeout_s: Type.Optional(Type.Integer({ minimum: 1, maximum: 3600 })),
      }),
      response: {
        200: Type.Object({
          exit_code: Type.Integer(),
          stdout: Type.String(),
          stderr: Type.String(),
          truncated: Type.Boolean({ description: "output was cut at the bound, or the command ran out of time" }),
          timed_out: Type.Boolean(),
        }),
      },
      handler: async (request) => {
        const res = await svc.exec(caller(request), request.params.id, request.body.command, request.body.timeout_s);
        return {
          exit_code: res.exitCode,
          stdout: res.stdout,
          stderr: res.stderr,
          truncated: res.truncated,
          timed_out: res.timedOut,
        };
      },
    }),
  ];
}
