import { Type } from "@sinclair/typebox";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { Body, Nullable } from "../../http/schemas.js";
import { tags } from "../public.js";
import { installScript } from "./install.js";
import type { OrgHostsService } from "./service.js";

const publicRule = { public: true } as const;
const bearer = (request: FastifyRequest) =>
  /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? "")?.[1] ?? null;

const Label = Type.Record(Type.String({ maxLength: 63 }), Type.String({ maxLength: 255 }), { maxProperties: 32 });
const PodState = Type.Union([
  Type.Literal("creating"),
  Type.Literal("running"),
  Type.Literal("stopped"),
  Type.Literal("failed"),
  Type.Literal("removed"),
]);
const Desired = Type.Union([Type.Literal("running"), Type.Literal("stopped"), Type.Literal("removed")]);

const DesiredState = Type.Object({
  version: Type.String(),
  heartbeat_seconds: Type.Integer(),
  pods: Type.Array(
    Type.Object({
      pod_id: Type.String(),
      generation: Type.Integer(),
      desired_state: Type.String(),
      spec: Type.Unknown({
        description: "the container spec of the current generation (src/runtime/provider.ts); null when not running",
      }),
    }),
  ),
});

/**
 * The host agent's protocol (src/agent; README "External hosts"), beyond the spec's rows. Public routes as far as
 * platform tokens go: register is authenticated by the bootstrap token as the bearer, the others by the agent's own
 * credential (`Authorization: Bearer hac_…`), never by a user's token.
 */
export function agentRoutes(app: FastifyInstance, svc: OrgHostsService): void {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();

  r.get(
    "/v1/agent/install.sh",
    {
      config: { auth: publicRule, errors: [], summaryKo: "호스트 에이전트 설치 스크립트(install.shell이 받아 실행)." },
      schema: {
        operationId: "agentInstallScript",
        tags,
        summary: "The host agent's install script, which install.shell downloads and runs as root.",
        response: {
          200: { description: "a POSIX shell script", content: { "text/plain": { schema: Type.String() } } },
        },
      },
    },
    async (_request, reply) => reply.type("text/plain; charset=utf-8").send(await installScript()),
  );

  r.post(
    "/v1/agent/register",
    {
      config: {
        auth: publicRule,
        errors: ["auth_required", "invalid_request"],
        summaryKo: "에이전트 등록: 부트스트랩 토큰을 쓰고 에이전트 자격 증명을 받습니다.",
      },
      schema: {
        operationId: "agentRegister",
        tags,
        summary:
          "The agent registers with its one-time bootstrap token as the bearer (used up here) and receives its own long-lived credential; the host is then online.",
        body: Body({
          machine_name: Type.String({ minLength: 1, maxLength: 253 }),
          agent_version: Type.String({ minLength: 1, maxLength: 64 }),
          gpu_slots: Type.Integer({ minimum: 0, maximum: 64 }),
          capacity: Type.Object({
            cpus: Type.Integer({ minimum: 0, maximum: 100_000 }),
            memory_bytes: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }),
          }),
          labels: Label,
        }),
        response: {
          201: Type.Object({ host_id: Type.String(), credential: Type.String(), heartbeat_seconds: Type.Integer() }),
        },
      },
    },
    async (request, reply) => reply.code(201).send(await svc.register(bearer(request), request.body)),
  );

  r.get(
    "/v1/agent/desired",
    {
      config: {
        auth: publicRule,
        errors: ["auth_required"],
        summaryKo: "에이전트가 실행할 팟의 원하는 상태(롱 폴링).",
      },
      schema: {
        operationId: "agentDesired",
        tags,
        summary:
          "The pods the agent must run (long poll): answers at once when `version` is not the current one, else when it changes or after `wait` seconds. Counts as a heartbeat.",
        querystring: Type.Object({
          version: Type.Optional(Type.String({ maxLength: 64 })),
          wait: Type.Optional(Type.Integer({ minimum: 0, maximum: 60, default: 0 })),
        }),
        response: { 200: DesiredState },
      },
    },
    async (request) => {
      const host = await svc.agentHost(bearer(request));
      return svc.desired(host, request.query.version, request.query.wait ?? 0);
    },
  );

  r.post(
    "/v1/agent/report",
    {
      config: {
        auth: publicRule,
        errors: ["auth_required", "invalid_request"],
        summaryKo: "에이전트의 하트비트와 팟 상태 보고.",
      },
      schema: {
        operationId: "agentReport",
        tags,
        summary:
          "The agent's heartbeat with what runs: each pod's state, reason and address for the generation it works on.",
        body: Body({
          containers: Type.Integer({ minimum: 0, maximum: 100_000 }),
          pods: Type.Array(
            Type.Object({
              pod_id: Type.String({ format: "uuid" }),
              generation: Type.Integer({ minimum: 1 }),
              desired_state: Desired,
              state: PodState,
              reason: Nullable(Type.String({ maxLength: 1000 })),
              address: Nullable(Type.String({ maxLength: 300 })),
              serving_generation: Nullable(Type.Integer({ minimum: 1 })),
              restart_count: Type.Integer({ minimum: 0 }),
            }),
            { maxItems: 1000 },
          ),
        }),
        response: { 200: Type.Object({ version: Type.String() }) },
      },
    },
    async (request) => svc.report(await svc.agentHost(bearer(request)), request.body),
  );
}
