import type { Queryable } from "../../store/db.js";

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

const COLS = `id, account_id, amount_krw, depositor_name, receipt_type, tax_invoice, status, deposit_reported_at, reject_reason,
  credit_transaction_id, decided_at, created_at, updated_at`;

export async function insertTransfer(q: Queryable, t: Pick<BankTransferRow, "id" | "account_id" | "amount_krw" | "depositor_name" | "receipt_type" | "tax_invoice">): Promise<BankTransferRow> {
  const { rows } = await q.query<BankTransferRow>(
    `INSERT INTO billing_bank_transfers (id, account_id, owner_kind, owner_id, amount_krw, depositor_name, receipt_type, tax_invoice)
     VALUES ($1, $2, 'account', $2, $3, $4, $5, $6) RETURNING ${COLS}`,
    [t.id, t.account_id, t.amount_krw, t.depositor_name, t.receipt_type, t.tax_invoice],
  );
  return rows[0];
}

export async function findTransfer(q: Queryable, id: string, opts: { accountId?: string; lock?: boolean } = {}): Promise<BankTransferRow | null> {
  const { rows } = await q.query<BankTransferRow>(
    `SELECT ${COLS} FROM billing_bank_transfers WHERE id = $1 AND ($2::uuid IS NULL OR account_id = $2) ${opts.lock ? "FOR UPDATE" : ""}`,
    [id, opts.accountId ?? null],
  );
  return rows[0] ?? null;
}

/** Newest first; the cursor is the id of the last row of the previous page. */
export async function listTransfers(q: Queryable, f: { accountId?: string; status?: BankTransferStatus; limit: number; afterId?: string }): Promise<BankTransferRow[]> {
  const { rows } = await q.query<BankTransferRow>(
    `SELECT ${COLS} FROM billing_bank_transfers
      WHERE ($1::uuid IS NULL OR account_id = $1) AND ($2::text IS NULL OR status = $2)
        AND ($3::uuid IS NULL OR (created_at, id) < (SELECT created_at, id FROM billing_bank_transfers WHERE id = $3))
      ORDER BY created_at DESC, id DESC LIMIT $4`,
    [f.accountId ?? null, f.status ?? null, f.afterId ?? null, f.limit],
  );
  return rows;
}

type Patch = Partial<Pick<BankTransferRow, "status" | "depositor_name" | "deposit_reported_at" | "reject_reason" | "credit_transaction_id" | "decided_at">>;

export async function updateTransfer(q: Queryable, id: string, patch: Patch): Promise<BankTransferRow> {
  const keys = Object.keys(patch) as (keyof Patch)[];
  const { rows } = await q.query<BankTransferRow>(
    `UPDATE billing_bank_transfers SET ${[...keys.map((k, i) => `${k} = $${i + 2}`), "updated_at = now()"].join(", ")} WHERE id = $1 RETURNING ${COLS}`,
    [id, ...keys.map((k) => patch[k])],
  );
  return rows[0];
}

export async function countPending(q: Queryable, accountId: string): Promise<number> {
  const { rows } = await q.query<{ n: number }>("SELECT count(*)::int AS n FROM billing_bank_transfers WHERE account_id = $1 AND status = 'pending'", [accountId]);
  return rows[0].n;
}

export async function findBusinessProfile(q: Queryable, accountId: string): Promise<TaxInvoiceInfo | null> {
  const { rows } = await q.query<{ info: TaxInvoiceInfo }>("SELECT info FROM billing_business_profiles WHERE account_id = $1", [accountId]);
  return rows[0]?.info ?? null;
}

export async function saveBusinessProfile(q: Queryable, accountId: string, info: TaxInvoiceInfo): Promise<void> {
  await q.query(
    `INSERT INTO billing_business_profiles (account_id, owner_kind, owner_id, info) VALUES ($1, 'account', $1, $2)
     ON CONFLICT (account_id) DO UPDATE SET info = EXCLUDED.info, updated_at = now()`,
    [accountId, info],
  );
}
