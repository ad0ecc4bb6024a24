import type { FastifyRequest } from "fastify";
import type { Queryable } from "../store/db.js";
import { ApiError } from "../http/errors.js";
import type { RouteGuard } from "../http/route-guard.js";
import { findPartner, type PartnerRow } from "./repo.js";

declare module "fastify" {
  interface FastifyRequest {
    /** set on /v1/partner routes: the calling partner (src/partner/guard.ts) */
    partner?: PartnerRow;
  }
}

/**
 * The guard of every route acting under the scope resource partner (scopes.ts declares it: every /v1/partner route),
 * asked by the one authorizer after the scope evaluator admitted partner:read or partner:write: the caller must be a
 * partner account acting for itself, with its full-access token or one of its own keys. A child key, an organization key or any other account is refused with
 * 403 partner_required before the body is read. The routes list partner_required in their errors themselves
 * (schemas.ts PARTNER_ERRORS).
 */
export function partnerAccountGuard(db: Queryable): RouteGuard {
  return {
    check: async (request) => {
      const p = request.principal!;
      if (p.owner.kind !== "account" || p.owner.id !== p.accountId)
        throw new ApiError(
          "partner_required",
          p.owner.kind === "partner_child"
            ? "A child token cannot call /v1/partner endpoints."
            : "Partner endpoints act for the partner account itself, not for an organization.",
        );
      const partner = await findPartner(db, p.accountId);
      if (!partner)
        throw new ApiError(
          "partner_required",
          "This account is not a partner; the platform operator makes partner accounts on request.",
        );
      request.partner = partner;
    },
  };
}

/** The partner the guard found (every /v1/partner route). */
export function partnerOf(request: FastifyRequest): PartnerRow {
  if (!request.partner) throw new Error("partnerOf: not a /v1/partner route");
  return request.partner;
}
