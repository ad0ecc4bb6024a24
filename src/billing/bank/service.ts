import { randomUUID } from "node:crypto";
import type { PaymentsConfig } from "../../config/config.js";
import type { Db } from "../../store/db.js";
import type { Principal } from "../../auth/principal.js";
import { auditedTransaction } from "../../audit/record.js";
import { walletOwnerOf } from "../owner.js";
import { payerOf } from "../payments/service.js";
import { badRequest, conflict, found } from "../../http/errors.js";
import { postWithSystem } from "../ledger/ledger.js";
import { formatBrn, isValidBrn, normaliseBrn } from "./brn.js";
import * as repo from "./repo.js";

/** Pending requests one owner may have open at once. */
export const MAX_PENDING = 5;

export const bankCreditKey = (transferId: string) => `bank-transfer:${transferId}:credit`;

const notPending = (t: repo.BankTransferRow, action: string) =>
  conflict("invalid_state", `This bank transfer is ${t.status}; only a pending one can be ${action}.`);

/**
 * Bank-transfer top-ups: the customer announces a deposit to the platform's account, optionally asking
 * for a tax invoice; an operator matches the deposit and confirms (the wallet is credited once) or rejects.
 */
export function bankTransferService(db: Db, config: PaymentsConfig) {
  async function create(
    p: Principal,
    input: {
      amount_krw: number;
      depositor_name: string;
      receipt_type: "none" | "tax_invoice";
      tax_invoice?: repo.TaxInvoiceInfo;
    },
  ) {
    const { minKrw, maxKrw } = config.bank;
    if (!config.bank.accountNumber)
      throw badRequest("bank_transfer_unavailable", "Bank transfers are not configured on this platform.");
    if (input.amount_krw < minKrw || input.amount_krw > maxKrw)
      throw badRequest("amount_out_of_range", `amount_krw must be between ${minKrw} and ${maxKrw}.`);
    const depositor = input.depositor_name.trim();
    if (!depositor) throw badRequest("invalid_request", "depositor_name must not be blank.");
    let invoice: repo.TaxInvoiceInfo | null = null;
    if (input.receipt_type === "tax_invoice") {
      if (!input.tax_invoice)
        throw badRequest("tax_invoice_required", "receipt_type tax_invoice needs the tax_invoice business details.");
      const digits = normaliseBrn(input.tax_invoice.business_number);
      if (!digits || !isValidBrn(digits))
        throw badRequest(
          "invalid_business_number",
          "tax_invoice.business_number is not a valid business registration number (10 digits with a correct check digit).",
        );
      invoice = { ...input.tax_invoice, business_number: formatBrn(digits) };
    } else if (input.tax_invoice) {
      throw badRequest("invalid_request", "tax_invoice is only sent with receipt_type tax_invoice.");
    }
    return auditedTransaction(db, p, async (tx) => {
      await repo.lockOwnerTransfers(tx, p.owner);
      if ((await repo.countPending(tx, p.owner)) >= MAX_PENDING) {
        throw conflict(
          "too_many_pending",
          `At most ${MAX_PENDING} bank transfers may be pending at once; cancel one or wait for confirmation.`,
        );
      }
      const row = await repo.insertTransfer(tx, payerOf(p), {
        id: randomUUID(),
        amount_krw: input.amount_krw,
        depositor_name: depositor,
        receipt_type: input.receipt_type,
        tax_invoice: invoice,
      });
      if (invoice) await repo.saveBusinessProfile(tx, payerOf(p), invoice);
      return row;
    });
  }

  async function get(p: Principal, id: string) {
    return found(await repo.findTransfer(db, id, { owner: p.owner }), "bank transfer");
  }

  /** The caller's owner's requests, or with the operator (no principal) every owner's. */
  const list = (p: Principal | null, f: { status?: repo.BankTransferStatus; limit: number; afterId?: string }) =>
    repo.listTransfers(db, { ...f, owner: p?.owner });

  async function cancel(p: Principal, id: string) {
    return auditedTransaction(db, p, async (tx) => {
      const t = found(await repo.findTransfer(tx, id, { owner: p.owner, lock: true }), "bank transfer");
      if (t.status === "cancelled") return t;
      if (t.status !== "pending") throw notPending(t, "cancelled");
      if (t.deposit_reported_at)
        throw conflict(
          "deposit_reported",
          "The deposit was reported; an operator will confirm or reject it, so it can no longer be cancelled.",
        );
      return repo.updateTransfer(tx, id, { status: "cancelled", decided_at: new Date() });
    });
  }

  async function reportDeposit(p: Principal, id: string, depositorName: string | undefined) {
    return auditedTransaction(db, p, async (tx) => {
      const t = found(await repo.findTransfer(tx, id, { owner: p.owner, lock: true }), "bank transfer");
      if (t.status !== "pending") throw notPending(t, "reported as deposited");
      const name = depositorName?.trim();
      if (depositorName !== undefined && !name)
        throw badRequest("invalid_request", "depositor_name must not be blank.");
      return repo.updateTransfer(tx, id, {
        deposit_reported_at: t.deposit_reported_at ?? new Date(),
        ...(name ? { depositor_name: name } : {}),
      });
    });
  }

  /** Operator: the deposit arrived. Credits the wallet once (the ledger key is the request's id). */
  async function confirm(operator: Principal | null, id: string) {
    return auditedTransaction(db, operator, async (tx) => {
      const t = found(await repo.findTransfer(tx, id, { lock: true }), "bank transfer");
      if (t.status !== "pending") throw notPending(t, "confirmed");
      const { transaction } = await postWithSystem(tx, {
        owner: walletOwnerOf(repo.transferOwner(t)),
        system: "bank-clearing",
        amount: t.amount_krw,
        currency: "KRW",
        source: { type: "topup", id: t.id },
        idempotencyKey: bankCreditKey(t.id),
        memo: `bank transfer from ${t.depositor_name}`,
      });
      return repo.updateTransfer(tx, id, {
        status: "confirmed",
        credit_transaction_id: transaction.id,
        decided_at: new Date(),
      });
    });
  }

  async function reject(operator: Principal | null, id: string, reason: string | undefined) {
    return auditedTransaction(db, operator, async (tx) => {
      const t = found(await repo.findTransfer(tx, id, { lock: true }), "bank transfer");
      if (t.status !== "pending") throw notPending(t, "rejected");
      return repo.updateTransfer(tx, id, { status: "rejected", reject_reason: reason ?? null, decided_at: new Date() });
    });
  }

  async function config_(p: Principal) {
    return { bank: config.bank, business: await repo.findBusinessProfile(db, p.owner) };
  }

  return { create, get, list, cancel, reportDeposit, confirm, reject, config: config_ };
}
