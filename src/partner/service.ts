/**
 * Partner accounts: the operator makes an account a partner and sets its billing mode and monthly limit; the partner
 * reads its profile and registers its visitor login URL and the ceiling of its child tokens.
 */
import type { Db } from "../store/db.js";
import type { Kernel } from "../kernel/kernel.js";
import type { Principal } from "../auth/principal.js";
import { auditedTransaction } from "../audit/record.js";
import { ApiError } from "../http/errors.js";
import { setWalletPolicy, walletFor } from "../billing/public.js";
import * as repo from "./repo.js";
import * as children from "./children/repo.js";
import { checkCeiling, DEFAULT_CHILD_SCOPES } from "./children/scopes.js";
import { assertVisitorUrl, partnerView } from "./schemas.js";
import { monthUsageKrw } from "./usage.js";

export interface PartnerDeps {
  db: Db;
  kernel: Pick<Kernel, "use">;
}

export const ceilingOf = (p: repo.PartnerRow): readonly string[] => p.child_scopes ?? DEFAULT_CHILD_SCOPES;

export function partnerService({ db, kernel }: PartnerDeps) {
  async function view(p: repo.PartnerRow) {
    const ids = await children.childIdsOf(db, p.account_id);
    return partnerView(p, {
      usage: await monthUsageKrw(db, kernel, ids),
      children: ids.length,
      childScopes: [...ceilingOf(p)],
    });
  }

  /**
   * PUT /v1/operator/partners/{account_id}: makes the account a partner or changes its mode and limit. Postpaid needs a
   * monthly limit (400). Children's wallets follow the mode: prepaid under child_prepaid (a paid creation needs the
   * child's balance), postpaid under partner_postpaid (billed to the partner afterwards, src/partner/billing).
   */
  async function operatorSet(
    accountId: string,
    input: { billing_mode?: repo.BillingMode; monthly_limit_krw?: number | null },
  ) {
    const row = await auditedTransaction(db, null, async (tx) => {
      const cur = await repo.findPartner(tx, accountId, { forUpdate: true });
      const mode = input.billing_mode ?? cur?.billing_mode ?? "child_prepaid";
      const limit = input.monthly_limit_krw !== undefined ? input.monthly_limit_krw : (cur?.monthly_limit_krw ?? null);
      if (mode === "partner_postpaid" && limit === null)
        throw new ApiError(
          "invalid_request",
          "partner_postpaid needs a monthly_limit_krw (spec: postpaid requires a monthly limit).",
        );
      let next: repo.PartnerRow;
      try {
        next = await repo.upsertPartner(tx, accountId, { billing_mode: mode, monthly_limit_krw: limit });
      } catch (err) {
        if ((err as { code?: string }).code === "23503") throw new ApiError("not_found", "No such account.");
        throw err;
      }
      if (cur && cur.billing_mode !== mode) {
        for (const id of await children.childIdsOf(tx, accountId)) {
          const wallet = await walletFor(tx, { kind: "partner_child", id }, "KRW");
          await setWalletPolicy(tx, wallet.id, mode === "partner_postpaid" ? "postpaid" : "prepaid");
        }
      }
      return next;
    });
    return view(row);
  }

  /** PATCH /v1/partner: visitor_login_url (https; http on loopback) and child_scopes (the child token ceiling). */
  async function update(
    p: Principal,
    partner: repo.PartnerRow,
    input: { visitor_login_url?: string | null; child_scopes?: string[] | null },
  ) {
    if (input.visitor_login_url) assertVisitorUrl(input.visitor_login_url);
    const scopes = input.child_scopes ? checkCeiling(input.child_scopes) : input.child_scopes;
    const row = await auditedTransaction(db, p, (tx) =>
      repo.updateProfile(tx, partner.account_id, { visitor_login_url: input.visitor_login_url, child_scopes: scopes }),
    );
    return view(row);
  }

  return { view, operatorSet, update };
}

export type PartnerService = ReturnType<typeof partnerService>;
