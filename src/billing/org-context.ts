import type { Queryable } from "../store/db.js";
import type { Kernel } from "../kernel/kernel.js";
import type { RouteGuard } from "../http/route-guard.js";
import { ApiError } from "../http/errors.js";
import { findWalletOf } from "./ledger/ledger.js";

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

/**
 * The guard of every route acting under the scope resource billing (scopes.ts declares it). In the company context
 * (X-Owner: org, or an organization API key) the billing routes read and move the organization's wallet (balance,
 * transactions, usage, top-ups, card, auto-recharge, bank transfers): admins and the owner only; a member gets 403
 * forbidden_role. Outside it the guard lets everyone through.
 */
export function orgWalletAdminsGuard(kernel: Pick<Kernel, "use">, db: Queryable): RouteGuard {
  return {
    check: async (request) => {
      const p = request.principal;
      if (!p || p.owner.kind !== "org") return;
      const instead = ORG_ROUTE_INSTEAD[`${request.method} ${request.routeOptions.url}`];
      if (instead)
        throw new ApiError(
          "forbidden_role",
          `In the company context this is ${instead}, with the organization's rules.`,
        );
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
    },
  };
}
