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
 * A LedgerError is thrown before anything is written, so your transaction stays usable. (One exception:
 * postMany racing a concurrent post that holds one of its keys with other content, found only once
 * other postings of the batch are written; the statement fails as a whole, LedgerError
 * `idempotency_conflict`, and your transaction is aborted.)
 * Lock order: wallets are locked in id order; lock your own rows before calling post if you need both.
 *
 * Implementation: one round trip per post/postMany, the SQL function ledger_post_many (migration 008),
 * which locks, looks up the keys, checks the floor and writes in the order above. Concurrent
 * `post(pool, ...)` calls of a process are coalesced into one call and one commit (PostQueue): a hot
 * wallet then takes one row lock and one WAL flush per batch; each posting still stands alone.
 *
 * Files: this one is the entry point and the API (it re-exports types.ts and wallets-repo.ts); the call of
 * ledger_post_many is in post-repo.ts, the coalescing PostQueue in post-queue.ts.
 */
import pg from "pg";
import type { Queryable } from "../../store/db.js";
import {
  LedgerError,
  type PostInput,
  type PostOptions,
  type SystemWalletName,
  type Wallet,
  type WalletOwner,
} from "./types.js";
import { systemWallet, walletFor } from "./wallets-repo.js";
import { callPost, type PostResult } from "./post-repo.js";
import { queueOf } from "./post-queue.js";

export * from "./types.js";
export * from "./wallets-repo.js";
export type { PostResult } from "./post-repo.js";

function validate(input: PostInput): void {
  if (!input.idempotencyKey) throw new LedgerError("invalid_amount", "An idempotency key is required.");
  if (input.legs.length < 2) throw new LedgerError("unbalanced", "A transaction needs at least two legs.");
  let sum = 0;
  for (const leg of input.legs) {
    if (!Number.isSafeInteger(leg.amount) || leg.amount === 0)
      throw new LedgerError("invalid_amount", `Leg amounts are non-zero integers (got ${leg.amount}).`);
    sum += leg.amount;
  }
  if (sum !== 0) throw new LedgerError("unbalanced", `Legs sum to ${sum}, not 0.`);
}

/**
 * Posts one balanced transaction. Idempotent by key; throws LedgerError before writing anything when
 * the legs don't balance or a prepaid wallet would go below 0 (unless opts.overdraft).
 *
 * One round trip: the SQL function ledger_post_many (migration 008) does the whole posting. Given the
 * pool, concurrent calls of this process are coalesced into one call and one commit (PostQueue, post-queue.ts):
 * each posting still stands alone (a refused one doesn't affect the others) and they apply in call order.
 */
export async function post(q: Queryable, input: PostInput, opts: PostOptions = {}): Promise<PostResult> {
  validate(input);
  if (q instanceof pg.Pool) return queueOf(q).submit({ input, overdraft: opts.overdraft ?? false });
  return (await postMany(q, [input], opts))[0];
}

/**
 * The common posting of two legs: `amount` into the owner's wallet out of one of the platform's system wallets
 * (a top-up from payments-clearing, a transfer from bank-clearing, an adjustment), or back when negative (a
 * refund). The owner's wallet is created on first use and comes back with the result.
 */
export async function postWithSystem(
  q: Queryable,
  input: Omit<PostInput, "legs"> & { owner: WalletOwner; system: SystemWalletName; amount: number },
  opts: PostOptions = {},
): Promise<PostResult & { wallet: Wallet }> {
  const { owner, system, amount, ...posting } = input;
  const wallet = await walletFor(q, owner, input.currency);
  const other = await systemWallet(q, system, input.currency);
  const legs = [
    { walletId: wallet.id, amount },
    { walletId: other.id, amount: -amount },
  ];
  return { ...(await post(q, { ...posting, legs }, opts)), wallet };
}

/**
 * Posts several transactions at once (set-based: one statement whatever their number), all or none;
 * same rules as post(), applied in input order. Metering charges a batch of wallets this way.
 */
export async function postMany(q: Queryable, inputs: PostInput[], opts: PostOptions = {}): Promise<PostResult[]> {
  for (const input of inputs) validate(input);
  const keys = new Set<string>();
  for (const input of inputs) {
    if (keys.has(input.idempotencyKey))
      throw new LedgerError(
        "idempotency_conflict",
        `Idempotency key ${input.idempotencyKey} appears twice in one batch.`,
      );
    keys.add(input.idempotencyKey);
  }
  if (!inputs.length) return [];
  // given the pool, the single statement is its own transaction
  const outcomes = await callPost(
    q,
    inputs.map((input) => ({ input, overdraft: opts.overdraft ?? false })),
    true,
  );
  const refusal = outcomes.find((o) => o instanceof Error);
  if (refusal) throw refusal;
  return outcomes as PostResult[];
}
