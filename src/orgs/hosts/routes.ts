import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { callerOf } from "../../auth/principal.js";
import { Body, Nullable, Timestamp } from "../../http/schemas.js";
import { IdParams, orgOf, read, tags, write } from "../public.js";
import type { OrgHost, OrgHostsService } from "./service.js";
import { registerRoutes, route, type Route } from "../../http/route.js";

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
  const routes: Route[] = [];

  routes.push(
    route({
      method: "GET",
      url: "/v1/org/hosts",
      operationId: "listOrgHosts",
      tags,
      summary: "External hosts (admin): status (pending|online|offline), GPU slots, active pod count, last heartbeat.",
      summaryKo: "외부 호스트 목록.",
      auth: read,
      orgRole: "admin",
      response: { 200: Type.Object({ items: Type.Array(Host) }) },
      handler: async (request) => ({ items: (await svc.list(orgOf(request))).map(view) }),
    }),
  );

  routes.push(
    route({
      method: "POST",
      url: "/v1/org/hosts",
      operationId: "createOrgHost",
      tags,
      summary:
        "Register an external host (admin): a pending host, a one-time bootstrap token (24 h) and install.shell, which installs and starts the host agent on a Debian machine.",
      summaryKo: "외부 호스트 등록: 대기 중인 호스트, 일회용 부트스트랩 토큰, 설치 명령을 돌려줍니다.",
      auth: write,
      orgRole: "admin",
      errors: ["invalid_request"],
      body: Body({
        name: Type.String({ minLength: 1, maxLength: 63, pattern: NAME }),
        region: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 63, pattern: NAME }))),
      }),
      response: { 201: Issued },
      handler: async (request, reply) =>
        reply.code(201).send(issuedView(await svc.create(callerOf(request), orgOf(request), request.body))),
    }),
  );

  routes.push(
    route({
      method: "GET",
      url: "/v1/org/hosts/:id",
      operationId: "getOrgHost",
      tags,
      summary: "One external host (admin).",
      summaryKo: "외부 호스트 하나.",
      auth: read,
      orgRole: "admin",
      params: IdParams,
      response: { 200: Host },
      handler: async (request) => view(await svc.get(orgOf(request), request.params.id)),
    }),
  );

  routes.push(
    route({
      method: "DELETE",
      url: "/v1/org/hosts/:id",
      operationId: "deleteOrgHost",
      tags,
      summary:
        "Delete an external host (admin): 409 host_in_use while a pod is placed there; its agent credential stops working.",
      summaryKo: "외부 호스트 삭제. 팟이 있으면 409 host_in_use. 에이전트 자격 증명은 폐기됩니다.",
      auth: write,
      orgRole: "admin",
      errors: ["host_in_use"],
      params: IdParams,
      response: { 200: Type.Object({ deleted: Type.Boolean(), id: Type.String() }) },
      handler: async (request) => {
        await svc.remove(callerOf(request), orgOf(request), request.params.id);
        return { deleted: true, id: request.params.id };
      },
    }),
  );

  routes.push(
    route({
      method: "POST",
      url: "/v1/org/hosts/:id/bootstrap",
      operationId: "reissueOrgHostBootstrap",
      tags,
      summary:
        "A new bootstrap token and install.shell for a still-pending host (admin); the previous token stops working; 409 once registered.",
      summaryKo: "대기 중인 호스트의 부트스트랩 토큰 재발급. 등록된 호스트는 409.",
      auth: write,
      orgRole: "admin",
      errors: ["conflict"],
      params: IdParams,
      response: { 200: Issued },
      handler: async (request) => issuedView(await svc.reissue(callerOf(request), orgOf(request), request.params.id)),
    }),
  );
  registerRoutes(app, routes);
}
