/**
 * The billing ledger: double-entry, append-only, integer amounts only. Everything that moves money
 * (top-ups, usage, refunds, transfers, adjustments, invoices) goes through `post()`.
 *
 * Units: KRW in won, USD in micro-dollars (1 USD = 1_000_000). Never floats.
 * Sign: a leg's amount is what it adds to its wallet's balance (+ credit, - debit). The legs of a
 * transaction sum to zero (checked here and again by a trigger), so the sum of all entries of a
 * currency is always zero. Entries and transactions can't be updated or deleted (trigger); a correction
 * is a new transaction (source `refund` or `adjustment`).
 *
 * Wallets (`walletFor`, created on first use, one per owner and currency):
 *   owner kinds account | org | partner | platform. Policies:
 *   - prepaid  (default for account, org): a debit may not take the balance below 0 -> LedgerError
 *              `insufficient_funds` (HTTP 402), checked under the wallet's row lock, so concurrent debits
 *              can't overshoot. Exception: `post(..., {overdraft: true})` (used by metering for usage
 *              already consumed) may go below 0; the wallet then gets `overdue_since`, cleared by the
 *              first posting that brings it back to >= 0.
 *   - postpaid (default for partner; also partner_postpaid children): no floor, negative = owed.
 *   - suite    (billing_mode=suite accounts, 1 unit = 1 KRW): no floor; GET /v1/billing/balance says suite_billed.
 *   - system   (owner kind platform only, `systemWallet(q, name, currency)`): the platform's side of
 *              entries (revenue, payments-clearing, adjustments, bank-clearing, ...). Not row-locked and
 *              not cached, so they are no contention point; their balance is the sum of their entries.
 * `ledger_wallets.balance` caches sum(entries) for non-system wallets, updated in the same transaction
 * under the row lock (tests check cache = sum). `balance_after` on each entry is the running balance.
 *
 * Idempotency: every post names an `idempotencyKey` (unique). A second post with the same key and the
 * same content is a no-op returning the first transaction (`created: false`); the same key with other
 * legs/currency/source throws LedgerError `idempotency_conflict`. Use keys derived from the outside
 * event, e.g. `topup:<topup id>`, `stripe:<event id>`, `refund:<refund id>`.
 *
 * Transactions: pass a client inside your own BEGIN..COMMIT to make the posting atomic with your own
 * writes (e.g. marking a top-up succeeded), or pass the pool and `post` opens its own transaction.
 * A LedgerError is thrown before anything is written, so your transaction stays usable.
 * Lock order: wallets are locked in id order; lock your own rows before calling post if you need both.
 */
import { randomUUID } from "node:crypto";
import pg from "pg";
import { inTransaction, type Queryable } from "../../store/db.js";
import { ApiError, type ErrorCode, type MapsToApiError } from "../../http/errors.js";

export type Currency = "KRW" | "USD";
export const CURRENCIES: readonly Currency[] = ["KRW", "USD"];
/** minor units per major unit: KRW in won, USD in micro-dollars */
export const UNITS_PER_MAJOR: Record<Currency, number> = { KRW: 1, USD: 1_000_000 };

export type OwnerKind = "account" | "org" | "partner" | "platform";
export interface WalletOwner { kind: OwnerKind; id: string }
export type WalletPolicy = "prepaid" | "postpaid" | "suite" | "system";
export type SystemWalletName = "revenue" | "payments-clearing" | "adjustments" | "bank-clearing" | "partner-settlement";
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

export interface Leg { walletId: string; amount: number }

export interface PostInput {
  currency: Currency;
  source: { type: SourceType; id: string };
  idempotencyKey: string;
  legs: Leg[];
  memo?: string | null;
  /** the new transaction's id, when the caller needs it in advance (default: a random uuid) */
  id?: string;
}

export interface PostOptions {
  /** usage already consumed: prepaid debits may go below 0 (the wallet becomes overdue) */
  overdraft?: boolean;
}

export interface LedgerEntry { id: number; wallet_id: string; amount: number; balance_after: number | null }

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

export type LedgerErrorCode = "insufficient_funds" | "unbalanced" | "invalid_amount" | "idempotency_conflict" | "unknown_wallet" | "currency_mismatch";

export class LedgerError extends Error implements MapsToApiError {
  constructor(readonly code: LedgerErrorCode, message: string, readonly details: Record<string, unknown> = {}) {
    super(message);
  }
  /** the catalog entry an API answers with */
  toApiError(): ApiError {
    const code: ErrorCode = this.code === "insufficient_funds" ? "insufficient_funds"
      : this.code === "idempotency_conflict" ? "idempotency_conflict"
      : this.code === "unknown_wallet" ? "not_found" : "invalid_request";
    return new ApiError(code, this.message);
  }
  get status(): number {
    return this.toApiError().status;
  }
}

const WALLET_COLUMNS = "id, owner_kind, owner_id, currency, policy, balance, overdue_since, created_at";

function defaultPolicy(kind: OwnerKind): WalletPolicy {
  return kind === "platform" ? "system" : kind === "partner" ? "postpaid" : "prepaid";
}

/** The owner's wallet in that currency, created on first use (policy only applies at creation). */
export async function walletFor(q: Queryable, owner: WalletOwner, currency: Currency, opts: { policy?: WalletPolicy } = {}): Promise<Wallet> {
  const existing = await q.query<Wallet>(`SELECT ${WALLET_COLUMNS} FROM ledger_wallets WHERE owner_kind = $1 AND owner_id = $2 AND currency = $3`, [owner.kind, owner.id, currency]);
  if (existing.rows[0]) return existing.rows[0];
  const policy = opts.policy ?? defaultPolicy(owner.kind);
  if ((policy === "system") !== (owner.kind === "platform")) throw new LedgerError("unknown_wallet", "Only platform wallets are system wallets.");
  await q.query(
    `INSERT INTO ledger_wallets (id, owner_kind, owner_id, currency, policy, balance) VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (owner_kind, owner_id, currency) DO NOTHING`,
    [randomUUID(), owner.kind, owner.id, currency, policy, policy === "system" ? null : 0],
  );
  const { rows } = await q.query<Wallet>(`SELECT ${WALLET_COLUMNS} FROM ledger_wallets WHERE owner_kind = $1 AND owner_id = $2 AND currency = $3`, [owner.kind, owner.id, currency]);
  return rows[0];
}

/** The platform's wallet for the other side of entries. */
export function systemWallet(q: Queryable, name: SystemWalletName, currency: Currency): Promise<Wallet> {
  return walletFor(q, { kind: "platform", id: name }, currency);
}

export async function findWallet(q: Queryable, walletId: string): Promise<Wallet | null> {
  const { rows } = await q.query<Wallet>(`SELECT ${WALLET_COLUMNS} FROM ledger_wallets WHERE id = $1`, [walletId]);
  return rows[0] ?? null;
}

/** An existing wallet of that owner, or null (no creation). */
export async function findWalletOf(q: Queryable, owner: WalletOwner, currency: Currency): Promise<Wallet | null> {
  const { rows } = await q.query<Wallet>(`SELECT ${WALLET_COLUMNS} FROM ledger_wallets WHERE owner_kind = $1 AND owner_id = $2 AND currency = $3`, [owner.kind, owner.id, currency]);
  return rows[0] ?? null;
}

/** Switches a non-system wallet between prepaid, postpaid and suite (e.g. billing_mode changes). */
export async function setWalletPolicy(q: Queryable, walletId: string, policy: Exclude<WalletPolicy, "system">): Promise<void> {
  const { rowCount } = await q.query("UPDATE ledger_wallets SET policy = $2 WHERE id = $1 AND owner_kind <> 'platform'", [walletId, policy]);
  if (!rowCount) throw new LedgerError("unknown_wallet", `No non-system wallet ${walletId}.`);
}

/** A wallet's balance: the cached column (equal to the sum of entries), or the sum for system wallets. */
export async function balance(q: Queryable, walletId: string): Promise<number> {
  const { rows } = await q.query<{ balance: number | null; policy: WalletPolicy }>("SELECT balance, policy FROM ledger_wallets WHERE id = $1", [walletId]);
  if (!rows[0]) throw new LedgerError("unknown_wallet", `No wallet ${walletId}.`);
  if (rows[0].balance !== null) return rows[0].balance;
  return sumOfEntries(q, walletId);
}

/** The balance recomputed from the entries (for checks; balance() is the fast path). */
export async function sumOfEntries(q: Queryable, walletId: string): Promise<number> {
  const { rows } = await q.query<{ sum: number }>("SELECT coalesce(sum(amount), 0)::bigint AS sum FROM ledger_entries WHERE wallet_id = $1", [walletId]);
  return rows[0].sum;
}

export async function findTransaction(q: Queryable, where: { id: string } | { idempotencyKey: string }): Promise<LedgerTransaction | null> {
  const [col, val] = "id" in where ? ["id", where.id] : ["idempotency_key", where.idempotencyKey];
  const { rows } = await q.query<Omit<LedgerTransaction, "entries">>(
    `SELECT id, seq, currency, source_type, source_id, idempotency_key, memo, created_at FROM ledger_transactions WHERE ${col} = $1`, [val]);
  if (!rows[0]) return null;
  const entries = await q.query<LedgerEntry>("SELECT id, wallet_id, amount, balance_after FROM ledger_entries WHERE transaction_id = $1 ORDER BY id", [rows[0].id]);
  return { ...rows[0], entries: entries.rows };
}

function validate(input: PostInput): void {
  if (!input.idempotencyKey) throw new LedgerError("invalid_amount", "An idempotency key is required.");
  if (input.legs.length < 2) throw new LedgerError("unbalanced", "A transaction needs at least two legs.");
  let sum = 0;
  for (const leg of input.legs) {
    if (!Number.isSafeInteger(leg.amount) || leg.amount === 0) throw new LedgerError("invalid_amount", `Leg amounts are non-zero integers (got ${leg.amount}).`);
    sum += leg.amount;
  }
  if (sum !== 0) throw new LedgerError("unbalanced", `Legs sum to ${sum}, not 0.`);
}

function sameContent(tx: LedgerTransaction, input: PostInput): boolean {
  if (tx.currency !== input.currency || tx.source_type !== input.source.type || tx.source_id !== input.source.id) return false;
  const key = (legs: { w: string; a: number }[]) => legs.map((l) => `${l.w}:${l.a}`).sort().join(",");
  return key(tx.entries.map((e) => ({ w: e.wallet_id, a: e.amount }))) === key(input.legs.map((l) => ({ w: l.walletId, a: l.amount })));
}

function replay(existing: LedgerTransaction, input: PostInput): PostResult {
  if (!sameContent(existing, input)) {
    throw new LedgerError("idempotency_conflict", `Idempotency key ${input.idempotencyKey} was used for a different transaction.`, { transaction_id: existing.id });
  }
  return { transaction: existing, created: false };
}

export interface PostResult { transaction: LedgerTransaction; created: boolean }

/**
 * Posts one balanced transaction. Idempotent by key; throws LedgerError before writing anything when
 * the legs don't balance or a prepaid wallet would go below 0 (unless opts.overdraft).
 */
export async function post(q: Queryable, input: PostInput, opts: PostOptions = {}): Promise<PostResult> {
  return (await postMany(q, [input], opts))[0];
}

/**
 * Posts several transactions at once (set-based: a handful of statements whatever their number), all or
 * none; same rules as post(), applied in input order. Metering charges a batch of wallets this way.
 */
export async function postMany(q: Queryable, inputs: PostInput[], opts: PostOptions = {}): Promise<PostResult[]> {
  for (const input of inputs) validate(input);
  const keys = new Set<string>();
  for (const input of inputs) {
    if (keys.has(input.idempotencyKey)) throw new LedgerError("idempotency_conflict", `Idempotency key ${input.idempotencyKey} appears twice in one batch.`);
    keys.add(input.idempotencyKey);
  }
  if (!inputs.length) return [];
  if (q instanceof pg.Pool) return inTransaction(q, (tx) => postIn(tx, inputs, opts));
  return postIn(q, inputs, opts);
}

interface LockedWallet { id: string; currency: Currency; policy: WalletPolicy; balance: number | null }

async function postIn(q: Queryable, inputs: PostInput[], opts: PostOptions): Promise<PostResult[]> {
  const ids = [...new Set(inputs.flatMap((i) => i.legs.map((l) => l.walletId)))];
  // user wallets under row lock in id order (no deadlocks between posts); system wallets are only read
  const locked = await q.query<LockedWallet>(
    "SELECT id, currency, policy, balance FROM ledger_wallets WHERE id = ANY($1::uuid[]) AND owner_kind <> 'platform' ORDER BY id FOR UPDATE",
    [ids],
  );
  const wallets = new Map(locked.rows.map((w) => [w.id, w]));
  if (wallets.size < ids.length) {
    const rest = await q.query<LockedWallet>("SELECT id, currency, policy, balance FROM ledger_wallets WHERE id = ANY($1::uuid[]) AND owner_kind = 'platform'", [ids.filter((i) => !wallets.has(i))]);
    for (const w of rest.rows) wallets.set(w.id, w);
  }
  for (const input of inputs) {
    for (const leg of input.legs) {
      const w = wallets.get(leg.walletId);
      if (!w) throw new LedgerError("unknown_wallet", `No wallet ${leg.walletId}.`);
      if (w.currency !== input.currency) throw new LedgerError("currency_mismatch", `Wallet ${leg.walletId} holds ${w.currency}, not ${input.currency}.`);
    }
  }

  // replays: a concurrent first post with one of these keys has committed by now if it shares a user wallet (we waited on its lock)
  const results: (PostResult | null)[] = inputs.map(() => null);
  const existing = await findTransactions(q, inputs.map((i) => i.idempotencyKey));
  inputs.forEach((input, i) => {
    const tx = existing.get(input.idempotencyKey);
    if (tx) results[i] = replay(tx, input);
  });

  // running balances in input order; a prepaid debit may not go below 0 unless it is an overdraft
  const running = new Map<string, number>();
  const rows: { tx: number; wallet: string; amount: number; after: number | null }[] = [];
  const fresh = inputs.map((input, i) => ({ input, i, id: input.id ?? randomUUID() })).filter((x) => !results[x.i]);
  for (const { input, i } of fresh) {
    const deltas = new Map<string, number>();
    for (const leg of input.legs) deltas.set(leg.walletId, (deltas.get(leg.walletId) ?? 0) + leg.amount);
    for (const [id, delta] of deltas) {
      const w = wallets.get(id)!;
      if (w.balance === null) continue;
      const before = running.get(id) ?? w.balance;
      if (delta < 0 && w.policy === "prepaid" && before + delta < 0 && !opts.overdraft) {
        throw new LedgerError("insufficient_funds", `Wallet balance ${before} is less than ${-delta}.`, { wallet_id: id, balance: before, needed: -delta });
      }
    }
    for (const leg of input.legs) {
      const w = wallets.get(leg.walletId)!;
      let after: number | null = null;
      if (w.balance !== null) {
        after = (running.get(leg.walletId) ?? w.balance) + leg.amount;
        running.set(leg.walletId, after);
      }
      rows.push({ tx: i, wallet: leg.walletId, amount: leg.amount, after });
    }
  }
  if (!fresh.length) return results as PostResult[];

  const inserted = await q.query<Omit<LedgerTransaction, "entries">>(
    `INSERT INTO ledger_transactions (id, currency, source_type, source_id, idempotency_key, memo)
     SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[])
     ON CONFLICT (idempotency_key) DO NOTHING
     RETURNING id, seq, currency, source_type, source_id, idempotency_key, memo, created_at`,
    [fresh.map((f) => f.id), fresh.map((f) => f.input.currency), fresh.map((f) => f.input.source.type), fresh.map((f) => f.input.source.id),
      fresh.map((f) => f.input.idempotencyKey), fresh.map((f) => f.input.memo ?? null)],
  );
  const byKey = new Map(inserted.rows.map((r) => [r.idempotency_key, r]));
  const lost = fresh.filter((f) => !byKey.has(f.input.idempotencyKey));
  if (lost.length) {
    // the same key committed meanwhile by a post that touched only system wallets (no balances depend on it)
    const firsts = await findTransactions(q, lost.map((f) => f.input.idempotencyKey));
    for (const f of lost) {
      if (f.input.legs.some((l) => wallets.get(l.walletId)!.balance !== null)) throw new Error("ledger: idempotency race on a locked wallet");
      results[f.i] = replay(firsts.get(f.input.idempotencyKey)!, f.input);
    }
  }
  const txIdOf = new Map(fresh.map((f) => [f.i, f.id]));
  const kept = rows.filter((r) => !results[r.tx]);
  const entries = await q.query<LedgerEntry & { transaction_id: string }>(
    `INSERT INTO ledger_entries (transaction_id, wallet_id, currency, amount, balance_after)
     SELECT t, w, c, a, b FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::bigint[], $5::bigint[]) WITH ORDINALITY AS v(t, w, c, a, b, o) ORDER BY o
     RETURNING id, transaction_id, wallet_id, amount, balance_after`,
    [kept.map((r) => txIdOf.get(r.tx)), kept.map((r) => r.wallet), kept.map((r) => inputs[r.tx].currency), kept.map((r) => r.amount), kept.map((r) => r.after)],
  );

  if (running.size) {
    const upd = [...running];
    const overdue = upd.map(([id, b]) => wallets.get(id)!.policy === "prepaid" && b < 0);
    await q.query(
      `UPDATE ledger_wallets w SET balance = v.b,
         overdue_since = CASE WHEN v.o THEN coalesce(w.overdue_since, now()) ELSE NULL END
       FROM unnest($1::uuid[], $2::bigint[], $3::boolean[]) AS v(id, b, o) WHERE w.id = v.id`,
      [upd.map(([id]) => id), upd.map(([, b]) => b), overdue],
    );
  }
  const entriesOf = new Map<string, LedgerEntry[]>();
  for (const e of entries.rows.sort((a, b) => a.id - b.id)) {
    const { transaction_id, ...entry } = e;
    if (!entriesOf.has(transaction_id)) entriesOf.set(transaction_id, []);
    entriesOf.get(transaction_id)!.push(entry);
  }
  for (const f of fresh) {
    const row = byKey.get(f.input.idempotencyKey);
    if (row) results[f.i] = { transaction: { ...row, entries: entriesOf.get(row.id) ?? [] }, created: true };
  }
  return results as PostResult[];
}

async function findTransactions(q: Queryable, keys: string[]): Promise<Map<string, LedgerTransaction>> {
  const { rows } = await q.query<Omit<LedgerTransaction, "entries">>(
    "SELECT id, seq, currency, source_type, source_id, idempotency_key, memo, created_at FROM ledger_transactions WHERE idempotency_key = ANY($1::text[])", [keys]);
  const out = new Map<string, LedgerTransaction>();
  if (!rows.length) return out;
  const entries = await q.query<LedgerEntry & { transaction_id: string }>(
    "SELECT id, transaction_id, wallet_id, amount, balance_after FROM ledger_entries WHERE transaction_id = ANY($1::uuid[]) ORDER BY id", [rows.map((r) => r.id)]);
  for (const r of rows) {
    out.set(r.idempotency_key, { ...r, entries: entries.rows.filter((e) => e.transaction_id === r.id).map(({ transaction_id: _t, ...e }) => e) });
  }
  return out;
}
