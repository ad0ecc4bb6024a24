import { allRows, countOf, oneRow, oneValue, returnedRow, type Queryable } from "../../store/db.js";
import { xactLock } from "../../store/locks.js";
import type { Owner } from "../../kernel/owner.js";
import type { Payer } from "../payments/repo.js";

export type BankTransferStatus = "pending" | "confirmed" | "cancelled" | "rejected";

export interface TaxInvoiceInfo {
  business_number: string;
  company_name: string;
  representative: string;
  email: string;
  address?: string;
  business_type?: string;
  business_item?: string;
}

export interface BankTransferRow {
  id: string;
  account_id: string;
  owner_kind: Owner["kind"];
  owner_id: string;
  amount_krw: number;
  depositor_name: string;
  receipt_type: "none" | "tax_invoice";
  tax_invoice: TaxInvoiceInfo | null;
  status: BankTransferStatus;
  deposit_reported_at: Date | null;
  reject_reason: string | null;
  credit_transaction_id: string | null;
  decided_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

const COLS = `id, account_id, owner_kind, owner_id, amount_krw, depositor_name, receipt_type, tax_invoice, status, deposit_reported_at, reject_reason,
  credit_transaction_id, decided_at, created_at, updated_at`;

export const transferOwner = (t: Pick<BankTransferRow, "owner_kind" | "owner_id">): Owner => ({
  kind: t.owner_kind,
  id: t.owner_id,
});

export async function insertTransfer(
  q: Queryable,
  payer: Payer,
  t: Pick<BankTransferRow, "id" | "amount_krw" | "depositor_name" | "receipt_type" | "tax_invoice">,
): Promise<BankTransferRow> {
  return returnedRow<BankTransferRow>(
    q,
    `INSERT INTO billing_bank_transfers (id, account_id, owner_kind, owner_id, amount_krw, depositor_name, receipt_type, tax_invoice)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING ${COLS}`,
    [
      t.id,
      payer.accountId,
      payer.owner.kind,
      payer.owner.id,
      t.amount_krw,
      t.depositor_name,
      t.receipt_type,
      t.tax_invoice,
    ],
  );
}

/** A transfer by id; with an owner, only that owner's. */
export async function findTransfer(
  q: Queryable,
  id: string,
  opts: { owner?: Owner; lock?: boolean } = {},
): Promise<BankTransferRow | null> {
  return oneRow<BankTransferRow>(
    q,
    `SELECT ${COLS} FROM billing_bank_transfers WHERE id = $1 AND ($2::text IS NULL OR (owner_kind = $2 AND owner_id = $3::uuid)) ${opts.lock ? "FOR UPDATE" : ""}`,
    [id, opts.owner?.kind ?? null, opts.owner?.id ?? null],
  );
}

/** Newest first; the cursor is the id of the last row of the previous page. */
export async function listTransfers(
  q: Queryable,
  f: { owner?: Owner; status?: BankTransferStatus; limit: number; afterId?: string },
): Promise<BankTransferRow[]> {
  return allRows<BankTransferRow>(
    q,
    `SELECT ${COLS} FROM billing_bank_transfers
      WHERE ($1::text IS NULL OR (owner_kind = $1 AND owner_id = $5::uuid)) AND ($2::text IS NULL OR status = $2)
        AND ($3::uuid IS NULL OR (created_at, id) < (SELECT created_at, id FROM billing_bank_transfers WHERE id = $3))
      ORDER BY created_at DESC, id DESC LIMIT $4`,
    [f.owner?.kind ?? null, f.status ?? null, f.afterId ?? null, f.limit, f.owner?.id ?? null],
  );
}

type Patch = Partial<
  Pick<
    BankTransferRow,
    "status" | "depositor_name" | "deposit_reported_at" | "reject_reason" | "credit_transaction_id" | "decided_at"
  >
>;

export async function updateTransfer(q: Queryable, id: string, patch: Patch): Promise<BankTransferRow> {
  const keys = Object.keys(patch) as (keyof Patch)[];
  return returnedRow<BankTransferRow>(
    q,
    `UPDATE billing_bank_transfers SET ${[...keys.map((k, i) => `${k} = $${i + 2}`), "updated_at = now()"].join(", ")} WHERE id = $1 RETURNING ${COLS}`,
    [id, ...keys.map((k) => patch[k])],
  );
}

/** Serialises one owner's creations, so the pending limit holds under concurrency. */
export async function lockOwnerTransfers(q: Queryable, owner: Owner): Promise<void> {
  await xactLock(q, `bank-transfer:${owner.kind === "account" ? owner.id : `${owner.kind}:${owner.id}`}`);
}

export async function countPending(q: Queryable, owner: Owner): Promise<number> {
  return countOf(
    q,
    "SELECT count(*)::int AS n FROM billing_bank_transfers WHERE owner_kind = $1 AND owner_id = $2 AND status = 'pending'",
    [owner.kind, owner.id],
  );
}

export async function findBusinessProfile(q: Queryable, owner: Owner): Promise<TaxInvoiceInfo | null> {
  return oneValue<TaxInvoiceInfo>(
    q,
    "info",
    "SELECT info FROM billing_business_profiles WHERE owner_kind = $1 AND owner_id = $2",
    [owner.kind, owner.id],
  );
}

export async function saveBusinessProfile(q: Queryable, payer: Payer, info: TaxInvoiceInfo): Promise<void> {
  await q.query(
    `INSERT INTO billing_business_profiles (account_id, owner_kind, owner_id, info) VALUES ($1, $2, $3, $4)
     ON CONFLICT (owner_kind, owner_id) DO UPDATE SET account_id = EXCLUDED.account_id, info = EXCLUDED.info, updated_at = now()`,
    [payer.accountId, payer.owner.kind, payer.owner.id, info],
  );
}
