import { Type } from "@sinclair/typebox";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { FastifyInstance } from "fastify";
import { callerOf } from "../../auth/principal.js";
import { Body, Nullable, Timestamp } from "../../http/schemas.js";
import { IdParams, orgOf, read, tags, write } from "../public.js";
import type { OrgHost, OrgHostsService } from "./service.js";

const Host = Type.Object({
  id: Type.String(),
  name: Type.String(),
  region: Nullable(Type.String()),
  status: Type.Union([Type.Literal("pending"), Type.Literal("online"), Type.Literal("offline")], {
    description: "pending until the agent registers; online while its heartbeats arrive, else offline",
  }),
  gpu_slots: Type.Integer({ description: "GPUs the agent reported" }),
  active_pods: Type.Integer({ description: "pods placed here that are meant to run" }),
  pods: Type.Integer({ description: "pods placed here and not deleted (DELETE answers 409 host_in_use while any)" }),
  labels: Type.Record(Type.String(), Type.String(), { description: "reported by the agent (AGENT_LABELS)" }),
  capacity: Type.Record(Type.String(), Type.Unknown()),
  machine_name: Nullable(Type.String()),
  agent_version: Nullable(Type.String()),
  heartbeat_seconds: Type.Integer(),
  last_heartbeat_at: Nullable(Timestamp),
  registered_at: Nullable(Timestamp),
  bootstrap_expires_at: Nullable(Timestamp),
  created_at: Timestamp,
});

const Issued = Type.Object({
  host: Host,
  bootstrap: Type.Object({
    token: Type.String({ description: "one-time; shown only now; only its SHA-256 is kept" }),
    expires_at: Timestamp,
  }),
  install: Type.Object({
    shell: Type.String({
      description: "run as root on a Debian machine: installs podman and runc, the platform, and starts the agent",
    }),
  }),
});

const iso = (d: Date | null) => (d ? d.toISOString() : null);
const view = (h: OrgHost) => ({
  id: h.id,
  name: h.name,
  region: h.region,
  status: h.status,
  gpu_slots: h.gpu_slots,
  active_pods: h.activePods,
  pods: h.pods,
  labels: h.labels,
  capacity: h.capacity,
  machine_name: h.machine_name,
  agent_version: h.agent_version,
  heartbeat_seconds: h.heartbeat_seconds,
  last_heartbeat_at: iso(h.last_heartbeat_at),
  registered_at: iso(h.registered_at),
  bootstrap_expires_at: iso(h.bootstrap_expires_at),
  created_at: h.created_at.toISOString(),
});
const issuedView = (i: {
  host: OrgHost;
  bootstrap: { token: string; expires_at: Date };
  install: { shell: string };
}) => ({
  host: view(i.host),
  bootstrap: { token: i.bootstrap.token, expires_at: i.bootstrap.expires_at.toISOString() },
  install: i.install,
});

const NAME = "^[A-Za-z0-9][A-Za-z0-9._-]*$";

/** External hosts (admins): list, register (a pending host with its bootstrap token), one, delete, new token. */
export function orgHostRoutes(app: FastifyInstance, svc: OrgHostsService): void {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();

  r.get(
    "/v1/org/hosts",
    {
      config: { auth: read, orgRole: "admin", errors: ["not_found", "forbidden_role"], summaryKo: "외부 호스트 목록." },
      schema: {
        operationId: "listOrgHosts",
        tags,
        summary:
          "External hosts (admin): status (pending|online|offline), GPU slots, active pod count, last heartbeat.",
        response: { 200: Type.Object({ items: Type.Array(Host) }) },
      },
    },
    async (request) => ({ items: (await svc.list(orgOf(request))).map(view) }),
  );

  r.post(
    "/v1/org/hosts",
    {
      config: {
        auth: write,
        orgRole: "admin",
        errors: ["not_found", "forbidden_role", "invalid_request"],
        summaryKo: "외부 호스트 등록: 대기 중인 호스트, 일회용 부트스트랩 토큰, 설치 명령을 돌려줍니다.",
      },
      schema: {
        operationId: "createOrgHost",
        tags,
        summary:
          "Register an external host (admin): a pending host, a one-time bootstrap token (24 h) and install.shell, which installs and starts the host agent on a Debian machine.",
        body: Body({
          name: Type.String({ minLength: 1, maxLength: 63, pattern: NAME }),
          region: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 63, pattern: NAME }))),
        }),
        response: { 201: Issued },
      },
    },
    async (request, reply) =>
      reply.code(201).send(issuedView(await svc.create(callerOf(request), orgOf(request), request.body))),
  );

  r.get(
    "/v1/org/hosts/:id",
    {
      config: { auth: read, orgRole: "admin", errors: ["not_found", "forbidden_role"], summaryKo: "외부 호스트 하나." },
      schema: {
        operationId: "getOrgHost",
        tags,
        summary: "One external host (admin).",
        params: IdParams,
        response: { 200: Host },
      },
    },
    async (request) => view(await svc.get(orgOf(request), request.params.id)),
  );

  r.delete(
    "/v1/org/hosts/:id",
    {
      config: {
        auth: write,
        orgRole: "admin",
        errors: ["not_found", "forbidden_role", "host_in_use"],
        summaryKo: "외부 호스트 삭제. 팟이 있으면 409 host_in_use. 에이전트 자격 증명은 폐기됩니다.",
      },
      schema: {
        operationId: "deleteOrgHost",
        tags,
        summary:
          "Delete an external host (admin): 409 host_in_use while a pod is placed there; its agent credential stops working.",
        params: IdParams,
        response: { 200: Type.Object({ deleted: Type.Boolean(), id: Type.String() }) },
      },
    },
    async (request) => {
      await svc.remove(callerOf(request), orgOf(request), request.params.id);
      return { deleted: true, id: request.params.id };
    },
  );

  r.post(
    "/v1/org/hosts/:id/bootstrap",
    {
      config: {
        auth: write,
        orgRole: "admin",
        errors: ["not_found", "forbidden_role", "conflict"],
        summaryKo: "대기 중인 호스트의 부트스트랩 토큰 재발급. 등록된 호스트는 409.",
      },
      schema: {
        operationId: "reissueOrgHostBootstrap",
        tags,
        summary:
          "A new bootstrap token and install.shell for a still-pending host (admin); the previous token stops working; 409 once registered.",
        params: IdParams,
        response: { 200: Issued },
      },
    },
    async (request) => issuedView(await svc.reissue(callerOf(request), orgOf(request), request.params.id)),
  );
}
