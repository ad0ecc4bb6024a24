/**
 * The organization card (POST/DELETE /v1/org/billing/card) and its invoices (GET /v1/org/invoices[/{id}]).
 * README, "Invoices, card, bank transfers and statistics".
 */
import type { Principal } from "../../auth/principal.js";
import type { OrgMembership } from "../public.js";
import { auditedTransaction } from "../../audit/record.js";
import { ApiError } from "../../http/errors.js";
import { deleteSavedCard, endCardBilling, saveCardNow, savedCard, startCardBilling } from "../../billing/public.js";
import * as orgRepo from "../public.js";
import { chargeNow, type ChargeDeps } from "./charge.js";
import { finalizeIn, orgOwner } from "./finalize.js";
import * as repo from "./repo.js";

export type CardInput = { provider: "stripe" | "toss"; payment_method?: string; auth_key?: string };

const gone = () => new ApiError("not_found", "The organization no longer exists.");

export function invoicesService(deps: ChargeDeps) {
  const { db } = deps;

  async function billingView(orgId: string) {
    const [org, card, billing] = await Promise.all([
      orgRepo.findOrg(db, orgId),
      savedCard(deps.payments, orgOwner(orgId)),
      repo.findCardBilling(db, orgId),
    ]);
    if (!org) throw gone();
    return {
      billing_mode: org.billing_mode,
      card,
      card_billing_since: org.billing_mode === "card" ? (billing?.registered_at ?? null) : null,
    };
  }

  /**
   * Owner: saves the card through billing's card flow (owner = the organization) and, unless already paying by card,
   * switches the organization to card billing from now: pay-as-you-go on a postpaid wallet. A card registered again
   * replaces the saved one, and unpaid invoices are charged to it at once.
   */
  async function register(p: Principal, m: OrgMembership, input: CardInput) {
    const before = await orgRepo.findOrg(db, m.orgId);
    if (!before) throw gone();
    if (before.billing_mode === "suite")
      throw new ApiError("conflict", "The organization is billed through the suite; it has no card billing.");
    const card = await saveCardNow(deps.payments, p, input);
    const now = new Date();
    await auditedTransaction(db, p, async (tx) => {
      await repo.lockOrgBilling(tx, m.orgId);
      const org = await orgRepo.findOrg(tx, m.orgId, true);
      if (!org) throw gone();
      if (org.billing_mode === "suite")
        throw new ApiError("conflict", "The organization is billed through the suite; it has no card billing.");
      if (org.billing_mode !== "card") {
        await repo.insertCardBilling(tx, {
          org_id: org.id,
          registered_at: now,
          registered_by: p.accountId,
          previous_mode: org.billing_mode,
        });
        await orgRepo.updateOrg(tx, org.id, { billing_mode: "card" });
        await startCardBilling(tx, orgOwner(org.id));
      }
      await repo.rearmUnpaid(tx, org.id, now);
    });
    return { ...(await billingView(m.orgId)), card };
  }

  /**
   * Owner: ends card billing. Unpaid invoices: 409. Otherwise the months not invoiced yet and the month so far are
   * finalised (a closing invoice) while the organization returns to its previous billing mode, in one transaction
   * (so no usage falls between the two), then charged at once; the card is forgotten only when all is paid,
   * otherwise 409 and the card stays for the retries.
   */
  async function remove(p: Principal, m: OrgMembership) {
    const now = new Date();
    const owner = orgOwner(m.orgId);
    const created = await auditedTransaction(db, p, async (tx) => {
      await repo.lockOrgBilling(tx, m.orgId);
      const org = await orgRepo.findOrg(tx, m.orgId, true);
      if (!org) throw gone();
      const unpaid = await repo.unpaidCount(tx, org.id);
      if (unpaid.n > 0)
        throw new ApiError(
          "conflict",
          `${unpaid.n} invoice(s) of ${unpaid.krw} KRW are unpaid; the card stays until they are paid (register another card to retry now).`,
        );
      const billing = org.billing_mode === "card" ? await repo.findCardBilling(tx, org.id) : null;
      if (!billing) {
        if (!(await savedCard(deps.payments, owner, tx))) throw new ApiError("not_found", "No card is registered.");
        return [];
      }
      const invoices = await finalizeIn(tx, deps, billing, now, true);
      await orgRepo.updateOrg(tx, org.id, { billing_mode: billing.previous_mode });
      await repo.deleteCardBilling(tx, org.id);
      await endCardBilling(tx, owner);
      return invoices;
    });
    const settled: repo.InvoiceRow[] = [];
    for (const inv of created) settled.push(inv.status === "pending" ? await chargeNow(deps, inv, now) : inv);
    const open = settled.filter((i) => i.status !== "paid");
    if (open.length) {
      const krw = open.reduce((s, i) => s + i.total_krw, 0);
      const why = open.find((i) => i.failure_message)?.failure_message ?? "no answer from the card provider yet";
      throw new ApiError(
        "conflict",
        `Card billing ended, but ${open.length} final invoice(s) of ${krw} KRW are not paid (${why}); the card stays until they are (retried automatically, or register another card).`,
      );
    }
    await deleteSavedCard(deps.payments, p).catch((err: unknown) => {
      if (!(err instanceof ApiError && err.code === "not_found")) throw err;
    });
    const org = await orgRepo.findOrg(db, m.orgId);
    return {
      removed: true,
      billing_mode: org?.billing_mode ?? "personal",
      final_invoices: settled,
    };
  }

  async function list(m: OrgMembership, limit: number, cursor?: string) {
    const rows = await repo.listInvoices(db, m.orgId, limit, cursor);
    return {
      ...(await billingView(m.orgId)),
      items: rows,
      next_cursor: rows.length === limit ? rows[limit - 1].id : null,
    };
  }

  async function get(m: OrgMembership, id: string) {
    const inv = /^[0-9a-f-]{36}$/i.test(id) ? await repo.findInvoice(db, m.orgId, id) : null;
    if (!inv) throw new ApiError("not_found", "No such invoice in the organization.");
    return { invoice: inv, lines: await repo.invoiceLines(db, inv.id) };
  }

  return { register, remove, list, get };
}

export type InvoicesService = ReturnType<typeof invoicesService>;
