import type { FastifyRequest } from "fastify";
import type { OrgMembership } from "./contract.js";

/** The membership the authorizer found (routes declaring orgRole only; http/authenticate.ts). */
export function orgOf(request: FastifyRequest): OrgMembership {
  if (!request.org) throw new Error("orgOf: the route declares no orgRole");
  return request.org;
}
