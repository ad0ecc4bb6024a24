import { Type } from "@sinclair/typebox";
import type { AppContext } from "../kernel/context.js";
import { Timestamp } from "../http/schemas.js";
import { route, type Route } from "../http/route.js";
import type { HostRegistry } from "./service.js";

const Process = Type.Object({
  id: Type.String(),
  pid: Type.Integer(),
  roles: Type.Array(Type.String()),
  started_at: Timestamp,
  last_heartbeat_at: Timestamp,
  alive: Type.Boolean(),
});
const Host = Type.Object({
  id: Type.String(),
  name: Type.String(),
  roles: Type.Array(Type.String()),
  capacity: Type.Record(Type.String(), Type.Unknown()),
  heartbeat_seconds: Type.Integer(),
  available: Type.Boolean(),
  local: Type.Boolean({ description: "the host of the process that answered" }),
  registered_at: Timestamp,
  started_at: Timestamp,
  last_heartbeat_at: Timestamp,
  processes: Type.Array(Process),
});

/** The operator's view of the hosts (beyond the spec): OPERATOR_TOKEN only. */
export function hostRoutes(ctx: AppContext, hosts: HostRegistry): Route[] {
  return [
    route({
      method: "GET",
      url: "/v1/operator/hosts",
      operationId: "operatorListHosts",
      tags: ["operator"],
      summary:
        "Registered hosts: roles, capacity, last heartbeat, whether they count as available, and their live processes.",
      auth: { operator: true },
      response: { 200: Type.Array(Host) },
      handler: async () =>
        (await hosts.list(ctx.db)).map((h) => ({
          id: h.id,
          name: h.name,
          roles: h.roles,
          capacity: h.capacity,
          heartbeat_seconds: h.heartbeat_seconds,
          available: h.available,
          local: h.local,
          registered_at: h.registered_at.toISOString(),
          started_at: h.started_at.toISOString(),
          last_heartbeat_at: h.last_heartbeat_at.toISOString(),
          processes: h.processes.map((p) => ({
            id: p.id,
            pid: p.pid,
            roles: p.roles,
            started_at: p.started_at.toISOString(),
            last_heartbeat_at: p.last_heartbeat_at.toISOString(),
            alive: p.alive,
          })),
        })),
    }),
  ];
}
