import type { FastifyInstance } from "fastify";
import type { AuthRule } from "./auth-rule.js";

export interface RouteEntry {
  method: string;
  url: string;
  operationId: string | null;
  summary: string;
  summaryKo: string | null;
  tag: string;
  auth: AuthRule;
  /** the organization role a /v1/org route needs, if any */
  orgRole: "member" | "admin" | "owner" | null;
  /** the answer never ends (route.ts `streams`): walkers that wait for whole answers skip it */
  streams: boolean;
}

/** Records every API route as it is registered: the manual and tests read the table, so neither can drift from the code. */
export function collectRouteTable(app: FastifyInstance): RouteEntry[] {
  const table: RouteEntry[] = [];
  app.addHook("onRoute", (route) => {
    const schema = (route.schema ?? {}) as { operationId?: string; summary?: string; tags?: string[]; hide?: boolean };
    // routes hidden from the document (the console's page and session) are not part of the API either
    if (schema.hide) return;
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const method of methods) {
      table.push({
        method,
        url: route.url,
        operationId: schema.operationId ?? null,
        summary: schema.summary ?? "",
        summaryKo: route.config?.summaryKo ?? null,
        tag: schema.tags?.[0] ?? "other",
        auth: route.config!.auth!,
        orgRole: route.config?.orgRole ?? null,
        streams: route.config?.streams === true,
      });
    }
  });
  return table;
}
