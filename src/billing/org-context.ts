import type { preValidationHookHandler, RouteOptions } from "fastify";
import type { Queryable } from "../store/db.js";
import type { Kernel } from "../kernel/kernel.js";
import type { AuthRule } from "../http/auth-rule.js";
import { ApiError } from "../http/errors.js";
import { findWalletOf } from "./ledger/ledger.js";

/**
 * In the company context (X-Owner: org, or an organization API key) the billing routes read and move the
 * organization's wallet (balance, transactions, usage, top-ups, card, auto-recharge, bank transfers): admins and
 * the owner only; a member gets 403 forbidden_role. Applied at registration to every route whose auth rule is a
 * billing scope (registered after it: the billing area installs it before its own routes).
 */
/**
 * The organization's card and bank transfers have their own rows with their own rules (the owner registers the
 * card; no removal while invoices are unpaid; no bank transfers for card-billed organizations): the personal
 * routes that change them are refused in the company context, naming the organization's route.
 */
const ORG_ROUTE_INSTEAD: Record<string, string> = {
  "POST /v1/billing/cards": "POST /v1/org/billing/card",
  "DELETE /v1/billing/cards": "DELETE /v1/org/billing/card",
  "POST /v1/billing/bank-transfers": "POST /v1/org/bank-transfers",
};

export function orgBillingForAdmins(kernel: Pick<Kernel, "use">, db: Queryable) {
  const check: preValidationHookHandler = async (request) => {
    const p = request.principal;
    if (!p || p.owner.kind !== "org") return;
    const instead = ORG_ROUTE_INSTEAD[`${request.method} ${request.routeOptions.url}`];
    if (instead)
      throw new ApiError("forbidden_role", `In the company context this is ${instead}, with the organization's rules.`);
    const orgs = kernel.use("orgs");
    const m = orgs ? await orgs.membership(db, p.accountId) : null;
    // a suite-billed organization's balance says to every member that their company usage goes to the suite
    // (suite_billed); its wallet holds nothing of theirs to hide
    const suiteBalance =
      `${request.method} ${request.routeOptions.url}` === "GET /v1/billing/balance" &&
      m?.orgId === p.owner.id &&
      (await findWalletOf(db, { kind: "org", id: p.owner.id }, "KRW"))?.policy === "suite";
    if (suiteBalance) return;
    if (!orgs || !m || m.orgId !== p.owner.id || !orgs.roleAtLeast(m.role, "admin"))
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
    const errors = route.config?.errors ?? [];
    if (!errors.includes("forbidden_role"))
      route.config = { ...route.config, errors: [...errors, "forbidden_role"] } as typeof route.config;
  };
}
