import type { Queryable } from "../store/db.js";
import type { Kernel } from "../kernel/kernel.js";
import type { RouteGuard } from "../http/route-guard.js";
import { ApiError } from "../http/errors.js";
import "./contract.js";

/**
 * The guard of every route under the scope resource webhooks (scopes.ts). In the company context (X-Owner: org, or
 * an organization API key) an organization's webhook endpoints, their secrets and delivery logs (answer excerpts of
 * the organization's receivers) are for its admins and owner, as its wallet is: a member gets 403 forbidden_role.
 * Members still read the organization's events (GET /v1/events and the stream, scope events:read): what happened
 * is no secret among members, where it is sent is an admin's setting. Outside the company context it lets all through.
 */
export function orgWebhookAdminsGuard(kernel: Pick<Kernel, "use">, db: Queryable): RouteGuard {
  return {
    check: async (request) => {
      const p = request.principal;
      if (!p || p.owner.kind !== "org") return;
      const orgs = kernel.use("orgs");
      const m = orgs ? await orgs.membership(db, p.accountId) : null;
      if (!orgs || !m || m.orgId !== p.owner.id || !orgs.roleAtLeast(m.role, "admin"))
        throw new ApiError(
          "forbidden_role",
          "The organization's webhook endpoints and their deliveries are managed by its admins and owner.",
        );
    },
  };
}
