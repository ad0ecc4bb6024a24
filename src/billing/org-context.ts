import type { preValidationHookHandler, RouteOptions } from "fastify";
import type { Queryable } from "../store/db.js";
import type { Kernel } from "../kernel/kernel.js";
import { roleAtLeast } from "../kernel/orgs.js";
import type { AuthRule } from "../http/auth-rule.js";
import { ApiError } from "../http/errors.js";

/**
 * In the company context (X-Owner: org, or an organization API key) the billing routes read and move the
 * organization's wallet (balance, transactions, usage, top-ups, card, auto-recharge, bank transfers): admins and
 * the owner only; a member gets 403 forbidden_role. Applied at registration to every route whose auth rule is a
 * billing scope (registered after it: the billing area installs it before its own routes).
 */
export function orgBillingForAdmins(kernel: Pick<Kernel, "orgs">, db: Queryable) {
  const check: preValidationHookHandler = async (request) => {
    const p = request.principal;
    if (!p || p.owner.kind !== "org") return;
    const m = kernel.orgs ? await kernel.orgs.membership(db, p.accountId) : null;
    if (!m || m.orgId !== p.owner.id || !roleAtLeast(m.role, "admin"))
      throw new ApiError(
        "forbidden_role",
        "The organization's billing (its wallet, top-ups, card, transactions) is for its admins and owner.",
      );
  };
  return (route: RouteOptions): void => {
    const auth = route.config?.auth as AuthRule | undefined;
    if (!auth || !("scope" in auth) || !auth.scope.startsWith("billing:")) return;
    const list = <T>(h: T | T[] | undefined): T[] => (h === undefined ? [] : Array.isArray(h) ? h : [h]);
    route.preValidation = [...list(route.preValidation), check];
  };
}
