/** The ledger's types and its one error (see ledger.ts for the contract). */
import { randomBytes } from "node:crypto";
import { ApiError, type ErrorCode, type MapsToApiError } from "../../http/errors.js";

export type Currency = "KRW" | "USD";
export const CURRENCIES: readonly Currency[] = ["KRW", "USD"];
/** minor units per major unit: KRW in won, USD in micro-dollars */
export const UNITS_PER_MAJOR: Record<Currency, number> = { KRW: 1, USD: 1_000_000 };

export type OwnerKind = "account" | "org" | "partner" | "partner_child" | "platform";
export interface WalletOwner {
  kind: OwnerKind;
  id: string;
}
export type WalletPolicy = "prepaid" | "postpaid" | "suite" | "system";
export type SystemWalletName =
  "revenue" | "payments-clearing" | "adjustments" | "bank-clearing" | "partner-settlement" | "suite-receivable";
export type SourceType = "topup" | "usage" | "refund" | "transfer" | "adjustment" | "invoice";
export const SOURCE_TYPES: readonly SourceType[] = ["topup", "usage", "refund", "transfer", "adjustment", "invoice"];

export interface Wallet {
  id: string;
  owner_kind: OwnerKind;
  owner_id: string;
  currency: Currency;
  policy: WalletPolicy;
  /** cached balance; null for system wallets (use balance()) */
  balance: number | null;
  overdue_since: Date | null;
  created_at: Date;
}

export interface Leg {
  walletId: string;
  amount: number;
}

/**
 * A new transaction id: a time-ordered UUID (version 7: 48-bit Unix milliseconds, then random bits), so
 * new transactions land at the right edge of the B-tree indexes on transaction ids (the primary key,
 * (id, currency), the entries' transaction_id) instead of on random pages of ever larger indexes. The
 * default of post/postMany; use it for ids you need in advance too.
 */
export function newTransactionId(): string {
  const b = randomBytes(16);
  b.writeUIntBE(Date.now(), 0, 6);
  b[6] = (b[6] & 0x0f) | 0x70;
  b[8] = (b[8] & 0x3f) | 0x80;
  const h = b.toString("hex");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

export interface PostInput {
  currency: Currency;
  source: { type: SourceType; id: string };
  idempotencyKey: string;
  legs: Leg[];
  memo?: string | null;
  /** the new transaction's id, when the caller needs it in advance (default: newTransactionId()) */
  id?: string;
}

export interface PostOptions {
  /** usage already consumed: prepaid debits may go below 0 (the wallet becomes overdue) */
  overdraft?: boolean;
}

export interface LedgerEntry {
  id: number;
  wallet_id: string;
  amount: number;
  balance_after: number | null;
}

export interface LedgerTransaction {
  id: string;
  seq: number;
  currency: Currency;
  source_type: SourceType;
  source_id: string;
  idempotency_key: string;
  memo: string | null;
  created_at: Date;
  entries: LedgerEntry[];
}

export type LedgerErrorCode =
  | "insufficient_funds"
  | "unbalanced"
  | "invalid_amount"
  | "idempotency_conflict"
  | "unknown_wallet"
  | "currency_mismatch";

export class LedgerError extends Error implements MapsToApiError {
  constructor(
    readonly code: LedgerErrorCode,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
  }
  /** the catalog entry an API answers with */
  toApiError(): ApiError {
    const code: ErrorCode =
      this.code === "insufficient_funds"
        ? "insufficient_funds"
        : this.code === "idempotency_conflict"
          ? "idempotency_conflict"
          : this.code === "unknown_wallet"
            ? "not_found"
            : "invalid_request";
    return new ApiError(code, this.message);
  }
  get status(): number {
    return this.toApiError().status;
  }
}
