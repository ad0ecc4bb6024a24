import { randomUUID } from "node:crypto";
import type { PaymentsConfig } from "../../config/config.js";
import { inTransaction, type Db } from "../../store/db.js";
import { badRequest, conflict, notFound } from "../../http/errors.js";
import { post, systemWallet, walletFor } from "../ledger/ledger.js";
import { formatBrn, isValidBrn, normaliseBrn } from "./brn.js";
import * as repo from "./repo.js";

/** Pending requests one account may have open at once. */
export const MAX_PENDING = 5;

export const bankCreditKey = (transferId: string) => `bank-transfer:${transferId}:credit`;

const notPending = (t: repo.BankTransferRow, action: string) => conflict("invalid_state", `This bank transfer is ${t.status}; only a pending one can be ${action}.`);

/**
 * Bank-transfer top-ups: the customer announces a deposit to the platform's account, optionally asking
 * for a tax invoice; an operator matches the deposit and confirms (the wallet is credited once) or rejects.
 */
export function bankTransferService(db: Db, config: PaymentsConfig) {
  async function create(accountId: string, input: { amount_krw: number; depositor_name: string; receipt_type: "none" | "tax_invoice"; tax_invoice?: repo.TaxInvoiceInfo }) {
    const { minKrw, maxKrw } = config.bank;
    if (!config.bank.accountNumber) throw badRequest("bank_transfer_unavailable", "Bank transfers are not configured on this platform.");
    if (input.amount_krw < minKrw || input.amount_krw > maxKrw) throw badRequest("amount_out_of_range", `amount_krw must be between ${minKrw} and ${maxKrw}.`);
    const depositor = input.depositor_name.trim();
    if (!depositor) throw badRequest("invalid_request", "depositor_name must not be blank.");
    let invoice: repo.TaxInvoiceInfo | null = null;
    if (input.receipt_type === "tax_invoice") {
      if (!input.tax_invoice) throw badRequest("tax_invoice_required", "receipt_type tax_invoice needs the tax_invoice business details.");
      const digits = normaliseBrn(input.tax_invoice.business_number);
      if (!digits || !isValidBrn(digits)) throw badRequest("invalid_business_number", "tax_invoice.business_number is not a valid business registration number (10 digits with a correct check digit).");
      invoice = { ...input.tax_invoice, business_number: formatBrn(digits) };
    } else if (input.tax_invoice) {
      throw badRequest("invalid_request", "tax_invoice is only sent with receipt_type tax_invoice.");
    }
    return inTransaction(db, async (tx) => {
      // serialises one account's creations so the pending limit holds under concurrency
      await tx.query("SELECT pg_advisory_xact_lock(hashtext('bank-transfer:' || $1))", [accountId]);
      if ((await repo.countPending(tx, accountId)) >= MAX_PENDING) {
        throw conflict("too_many_pending", `At most ${MAX_PENDING} bank transfers may be pending at once; cancel one or wait for confirmation.`);
      }
      const row = await repo.insertTransfer(tx, { id: randomUUID(), account_id: accountId, amount_krw: input.amount_krw, depositor_name: depositor, receipt_type: input.receipt_type, tax_invoice: invoice });
      if (invoice) await repo.saveBusinessProfile(tx, accountId, invoice);
      return row;
    });
  }

  async function get(accountId: string, id: string) {
    const t = await repo.findTransfer(db, id, { accountId });
    if (!t) throw notFound("bank transfer");
    return t;
  }

  const list = (f: { accountId?: string; status?: repo.BankTransferStatus; limit: number; afterId?: string }) => repo.listTransfers(db, f);

  async function cancel(accountId: string, id: string) {
    return inTransaction(db, async (tx) => {
      const t = await repo.findTransfer(tx, id, { accountId, lock: true });
      if (!t) throw notFound("bank transfer");
      if (t.status === "cancelled") return t;
      if (t.status !== "pending") throw notPending(t, "cancelled");
      if (t.deposit_reported_at) throw conflict("deposit_reported", "The deposit was reported; an operator will confirm or reject it, so it can no longer be cancelled.");
      return repo.updateTransfer(tx, id, { status: "cancelled", decided_at: new Date() });
    });
  }

  async function reportDeposit(accountId: string, id: string, depositorName: string | undefined) {
    return inTransaction(db, async (tx) => {
      const t = await repo.findTransfer(tx, id, { accountId, lock: true });
      if (!t) throw notFound("bank transfer");
      if (t.status !== "pending") throw notPending(t, "reported as deposited");
      const name = depositorName?.trim();
      if (depositorName !== undefined && !name) throw badRequest("invalid_request", "depositor_name must not be blank.");
      return repo.updateTransfer(tx, id, { deposit_reported_at: t.deposit_reported_at ?? new Date(), ...(name ? { depositor_name: name } : {}) });
    });
  }

  /** Operator: the deposit arrived. Credits the wallet once (the ledger key is the request's id). */
  async function confirm(id: string) {
    return inTransaction(db, async (tx) => {
      const t = await repo.findTransfer(tx, id, { lock: true });
      if (!t) throw notFound("bank transfer");
      if (t.status !== "pending") throw notPending(t, "confirmed");
      const wallet = await walletFor(tx, { kind: "account", id: t.account_id }, "KRW");
      const clearing = await systemWallet(tx, "bank-clearing", "KRW");
      const { transaction } = await post(tx, {
        currency: "KRW", source: { type: "topup", id: t.id }, idempotencyKey: bankCreditKey(t.id),
        legs: [{ walletId: wallet.id, amount: t.amount_krw }, { walletId: clearing.id, amount: -t.amount_krw }],
        memo: `bank transfer from ${t.depositor_name}`,
      });
      return repo.updateTransfer(tx, id, { status: "confirmed", credit_transaction_id: transaction.id, decided_at: new Date() });
    });
  }

  async function reject(id: string, reason: string | undefined) {
    return inTransaction(db, async (tx) => {
      const t = await repo.findTransfer(tx, id, { lock: true });
      if (!t) throw notFound("bank transfer");
      if (t.status !== "pending") throw notPending(t, "rejected");
      return repo.updateTransfer(tx, id, { status: "rejected", reject_reason: reason ?? null, decided_at: new Date() });
    });
  }

  async function config_(accountId: string) {
    return { bank: config.bank, business: await repo.findBusinessProfile(db, accountId) };
  }

  return { create, get, list, cancel, reportDeposit, confirm, reject, config: config_ };
}
