/** Wallets: one per owner and currency, created on first use (see ledger.ts for the policies). */
import { randomUUID } from "node:crypto";
import { oneRow, oneValue, returnedRow, type Queryable } from "../../store/db.js";
import {
  LedgerError,
  type Currency,
  type LedgerEntry,
  type LedgerTransaction,
  type OwnerKind,
  type SystemWalletName,
  type Wallet,
  type WalletOwner,
  type WalletPolicy,
} from "./types.js";

const WALLET_COLUMNS = "id, owner_kind, owner_id, currency, policy, balance, overdue_since, created_at";

function defaultPolicy(kind: OwnerKind): WalletPolicy {
  return kind === "platform" ? "system" : kind === "partner" ? "postpaid" : "prepaid";
}

/** The owner's wallet in that currency, created on first use (policy only applies at creation). */
export async function walletFor(
  q: Queryable,
  owner: WalletOwner,
  currency: Currency,
  opts: { policy?: WalletPolicy } = {},
): Promise<Wallet> {
  const existing = await q.query<Wallet>(
    `SELECT ${WALLET_COLUMNS} FROM ledger_wallets WHERE owner_kind = $1 AND owner_id = $2 AND currency = $3`,
    [owner.kind, owner.id, currency],
  );
  if (existing.rows[0]) return existing.rows[0];
  const policy = opts.policy ?? defaultPolicy(owner.kind);
  if ((policy === "system") !== (owner.kind === "platform"))
    throw new LedgerError("unknown_wallet", "Only platform wallets are system wallets.");
  await q.query(
    `INSERT INTO ledger_wallets (id, owner_kind, owner_id, currency, policy, balance) VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (owner_kind, owner_id, currency) DO NOTHING`,
    [randomUUID(), owner.kind, owner.id, currency, policy, policy === "system" ? null : 0],
  );
  return returnedRow<Wallet>(
    q,
    `SELECT ${WALLET_COLUMNS} FROM ledger_wallets WHERE owner_kind = $1 AND owner_id = $2 AND currency = $3`,
    [owner.kind, owner.id, currency],
  );
}

/** The platform's wallet for the other side of entries. */
export function systemWallet(q: Queryable, name: SystemWalletName, currency: Currency): Promise<Wallet> {
  return walletFor(q, { kind: "platform", id: name }, currency);
}

export async function findWallet(q: Queryable, walletId: string): Promise<Wallet | null> {
  return oneRow<Wallet>(q, `SELECT ${WALLET_COLUMNS} FROM ledger_wallets WHERE id = $1`, [walletId]);
}

/** An existing wallet of that owner, or null (no creation). */
export async function findWalletOf(q: Queryable, owner: WalletOwner, currency: Currency): Promise<Wallet | null> {
  return oneRow<Wallet>(
    q,
    `SELECT ${WALLET_COLUMNS} FROM ledger_wallets WHERE owner_kind = $1 AND owner_id = $2 AND currency = $3`,
    [owner.kind, owner.id, currency],
  );
}

/** Switches a non-system wallet between prepaid, postpaid and suite (e.g. billing_mode changes). */
export async function setWalletPolicy(
  q: Queryable,
  walletId: string,
  policy: Exclude<WalletPolicy, "system">,
): Promise<void> {
  const { rowCount } = await q.query(
    "UPDATE ledger_wallets SET policy = $2 WHERE id = $1 AND owner_kind <> 'platform'",
    [walletId, policy],
  );
  if (!rowCount) throw new LedgerError("unknown_wallet", `No non-system wallet ${walletId}.`);
}

/** A wallet's balance: the cached column (equal to the sum of entries), or the sum for system wallets. */
export async function balance(q: Queryable, walletId: string): Promise<number> {
  const { rows } = await q.query<{ balance: number | null; policy: WalletPolicy }>(
    "SELECT balance, policy FROM ledger_wallets WHERE id = $1",
    [walletId],
  );
  if (!rows[0]) throw new LedgerError("unknown_wallet", `No wallet ${walletId}.`);
  if (rows[0].balance !== null) return rows[0].balance;
  return sumOfEntries(q, walletId);
}

/** The balance recomputed from the entries (for checks; balance() is the fast path). */
export async function sumOfEntries(q: Queryable, walletId: string): Promise<number> {
  // an aggregate answers one row, and coalesce makes its sum 0 for a wallet without entries
  return (await oneValue<number>(
    q,
    "sum",
    "SELECT coalesce(sum(amount), 0)::bigint AS sum FROM ledger_entries WHERE wallet_id = $1",
    [walletId],
  ))!;
}

export async function findTransaction(
  q: Queryable,
  where: { id: string } | { idempotencyKey: string },
): Promise<LedgerTransaction | null> {
  const [col, val] = "id" in where ? ["id", where.id] : ["idempotency_key", where.idempotencyKey];
  const { rows } = await q.query<Omit<LedgerTransaction, "entries">>(
    `SELECT id, seq, currency, source_type, source_id, idempotency_key, memo, created_at FROM ledger_transactions WHERE ${col} = $1`,
    [val],
  );
  if (!rows[0]) return null;
  const entries = await q.query<LedgerEntry>(
    "SELECT id, wallet_id, amount, balance_after FROM ledger_entries WHERE transaction_id = $1 ORDER BY id",
    [rows[0].id],
  );
  return { ...rows[0], entries: entries.rows };
}
