import type { FastifyInstance, FastifyRequest, preValidationHookHandler } from "fastify";
import type { Queryable } from "../store/db.js";
import { ApiError } from "../http/errors.js";
import { roleAtLeast, type OrgMembership, type OrgRole } from "./contract.js";
import * as repo from "./repo.js";

declare module "fastify" {
  interface FastifyRequest {
    /** set on /v1/org routes that declare `orgRole`: the caller's membership (role capped at admin for keys) */
    org?: OrgMembership;
  }
}

/**
 * The caller's membership as a /v1/org route sees it. An organization API key acts with its issuer's role, at most
 * admin (owner-only rows are account rows, which keys cannot call), and only while the issuer is still a member.
 */
export async function membershipOf(q: Queryable, request: FastifyRequest): Promise<OrgMembership | null> {
  const p = request.principal;
  if (!p) return null;
  const m = await repo.membership(q, p.accountId);
  if (!m) return null;
  if (p.owner.kind === "org") {
    if (p.owner.id !== m.orgId) return null;
    return { ...m, role: m.role === "owner" ? "admin" : m.role };
  }
  return m;
}

/**
 * Enforces `config.orgRole` on every route registered after it (the orgs area's routes): not a member → 404 (the
 * caller has no organization to see), below the role → 403 forbidden_role. The principal then acts for the
 * organization, so services, admission and the audit row (owner = the organization) follow.
 */
export function installOrgGuard(app: FastifyInstance, db: Queryable): void {
  const guard: preValidationHookHandler = async (request) => {
    const needed = request.routeOptions.config.orgRole as OrgRole;
    const m = await membershipOf(db, request);
    if (!m) throw new ApiError("not_found", "The caller is not a member of an organization.");
    if (!roleAtLeast(m.role, needed))
      throw new ApiError("forbidden_role", `This needs the organization role ${needed}; the caller is ${m.role}.`);
    request.org = m;
    const p = request.principal!;
    if (p.owner.kind !== "org") request.principal = { ...p, owner: { kind: "org", id: m.orgId } };
  };
  app.addHook("onRoute", (route) => {
    if (!route.config?.orgRole) return;
    const list = <T>(h: T | T[] | undefined): T[] => (h === undefined ? [] : Array.isArray(h) ? h : [h]);
    // before body validation, so a caller below the role gets 403 whatever the body, and after the body checks
    route.preValidation = [...list(route.preValidation), guard];
  });
}

/** The membership the guard found (routes declaring orgRole only). */
export function orgOf(request: FastifyRequest): OrgMembership {
  if (!request.org) throw new Error("orgOf: the route declares no orgRole");
  return request.org;
}
