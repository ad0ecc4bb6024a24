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
 */
import pg from "pg";
import type { Queryable } from "../../store/db.js";

import {
  LedgerError,
  newTransactionId,
  type Currency,
  type LedgerTransaction,
  type PostInput,
  type PostOptions,
  type SourceType,
} from "./types.js";

export * from "./types.js";
export * from "./wallets.js";

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

function sameContent(tx: LedgerTransaction, input: PostInput): boolean {
  if (tx.currency !== input.currency || tx.source_type !== input.source.type || tx.source_id !== input.source.id)
    return false;
  const key = (legs: { w: string; a: number }[]) =>
    legs
      .map((l) => `${l.w.toLowerCase()}:${l.a}`)
      .sort()
      .join(",");
  return (
    key(tx.entries.map((e) => ({ w: e.wallet_id, a: e.amount }))) ===
    key(input.legs.map((l) => ({ w: l.walletId, a: l.amount })))
  );
}

function replay(existing: LedgerTransaction, input: PostInput): PostResult {
  if (!sameContent(existing, input)) {
    throw new LedgerError(
      "idempotency_conflict",
      `Idempotency key ${input.idempotencyKey} was used for a different transaction.`,
      { transaction_id: existing.id },
    );
  }
  return { transaction: existing, created: false };
}

export interface PostResult {
  transaction: LedgerTransaction;
  created: boolean;
}

/**
 * Posts one balanced transaction. Idempotent by key; throws LedgerError before writing anything when
 * the legs don't balance or a prepaid wallet would go below 0 (unless opts.overdraft).
 *
 * One round trip: the SQL function ledger_post_many (migration 008) does the whole posting. Given the
 * pool, concurrent calls of this process are coalesced into one call and one commit (PostQueue below):
 * each posting still stands alone (a refused one doesn't affect the others) and they apply in call order.
 */
export async function post(q: Queryable, input: PostInput, opts: PostOptions = {}): Promise<PostResult> {
  validate(input);
  if (q instanceof pg.Pool) return queueOf(q).submit({ input, overdraft: opts.overdraft ?? false });
  return (await postMany(q, [input], opts))[0];
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

// ------------------------------------------------------------------ the SQL function

interface Posting {
  input: PostInput;
  overdraft: boolean;
}
/** a posting's outcome: its result, or why it was refused (LedgerError), or what failed */
type Outcome = PostResult | Error;
const isResult = (o: Outcome | undefined): o is PostResult => !!o && !(o instanceof Error);

interface PostRow {
  r_ord: number;
  r_outcome:
    "created" | "replayed" | "insufficient_funds" | "unknown_wallet" | "currency_mismatch" | "idempotency_conflict";
  r_detail: Record<string, unknown> | null;
  tx_id: string;
  tx_seq: number;
  tx_currency: Currency;
  tx_source_type: SourceType;
  tx_source_id: string;
  tx_key: string;
  tx_memo: string | null;
  tx_created_at: Date;
  e_id: number | null;
  e_wallet: string;
  e_amount: number;
  e_after: number | null;
}

const POST_SQL = `SELECT * FROM ledger_post_many($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[],
  $7::uuid[], $8::int[], $9::int[], $10::bigint[], $11::boolean[], $12::boolean)`;

/**
 * One call of ledger_post_many. atomic: the first refusal ends it with nothing written (its outcome is
 * the only one); otherwise every posting gets its own outcome. Refusals are returned as LedgerErrors.
 */
async function callPost(q: Queryable, postings: Posting[], atomic: boolean): Promise<Outcome[]> {
  const wallets = new Map<string, number>();
  const legPosting: number[] = [];
  const legSlot: number[] = [];
  const legAmount: number[] = [];
  postings.forEach(({ input }, i) => {
    for (const leg of input.legs) {
      const id = leg.walletId.toLowerCase();
      let slot = wallets.get(id);
      if (slot === undefined) wallets.set(id, (slot = wallets.size + 1));
      legPosting.push(i + 1);
      legSlot.push(slot);
      legAmount.push(leg.amount);
    }
  });
  const inputs = postings.map((p) => p.input);
  let rows: PostRow[];
  try {
    ({ rows } = await q.query<PostRow>({
      name: "ledger_post_many",
      text: POST_SQL,
      values: [
        inputs.map((i) => i.id ?? newTransactionId()),
        inputs.map((i) => i.currency),
        inputs.map((i) => i.source.type),
        inputs.map((i) => i.source.id),
        inputs.map((i) => i.idempotencyKey),
        inputs.map((i) => i.memo ?? null),
        [...wallets.keys()],
        legPosting,
        legSlot,
        legAmount,
        postings.map((p) => p.overdraft),
        atomic,
      ],
    }));
  } catch (err) {
    const e = err as { code?: string; message?: string; detail?: string };
    if (e?.code === "LG409") {
      const message = (e.message ?? "").replace(/^ledger: (.)/, (_, c: string) => c.toUpperCase());
      throw new LedgerError("idempotency_conflict", `${message}.`, e.detail ? { transaction_id: e.detail } : {});
    }
    throw err;
  }
  const outcomes: Outcome[] = new Array(postings.length);
  for (const r of rows) {
    const i = r.r_ord - 1;
    if (r.r_outcome === "created" || r.r_outcome === "replayed") {
      let result = outcomes[i] as PostResult | undefined;
      if (!result) {
        result = {
          transaction: {
            id: r.tx_id,
            seq: r.tx_seq,
            currency: r.tx_currency,
            source_type: r.tx_source_type,
            source_id: r.tx_source_id,
            idempotency_key: r.tx_key,
            memo: r.tx_memo,
            created_at: r.tx_created_at,
            entries: [],
          },
          created: r.r_outcome === "created",
        };
        outcomes[i] = result;
      }
      if (r.e_id !== null)
        result.transaction.entries.push({
          id: r.e_id,
          wallet_id: r.e_wallet,
          amount: r.e_amount,
          balance_after: r.e_after,
        });
    } else {
      outcomes[i] = refusal(r.r_outcome, r.r_detail ?? {}, inputs[i]);
    }
  }
  if (!atomic) {
    for (let i = 0; i < outcomes.length; i++)
      outcomes[i] ??= new Error(`ledger: no outcome for posting ${inputs[i].idempotencyKey}`);
  }
  return outcomes;
}

function refusal(
  code: Exclude<PostRow["r_outcome"], "created" | "replayed">,
  d: Record<string, unknown>,
  input: PostInput,
): LedgerError {
  switch (code) {
    case "insufficient_funds":
      return new LedgerError(code, `Wallet balance ${d.balance} is less than ${d.needed}.`, {
        wallet_id: d.wallet_id,
        balance: Number(d.balance),
        needed: Number(d.needed),
      });
    case "unknown_wallet":
      return new LedgerError(code, `No wallet ${d.wallet_id}.`);
    case "currency_mismatch":
      return new LedgerError(code, `Wallet ${d.wallet_id} holds ${d.currency}, not ${input.currency}.`);
    case "idempotency_conflict":
      return new LedgerError(code, `Idempotency key ${input.idempotencyKey} was used for a different transaction.`, {
        transaction_id: d.transaction_id,
      });
  }
}

// ------------------------------------------------------------------ coalescing post(pool) calls

/** postings per call of ledger_post_many */
const MAX_BATCH = 500;
/** calls in flight per pool */
const MAX_IN_FLIGHT = 1;

interface Waiting extends Posting {
  resolve: (r: PostResult) => void;
  reject: (e: unknown) => void;
}

/**
 * post(pool) calls of one pool that arrive while a call is in flight wait for it and then go together
 * in one call of ledger_post_many (not atomic: each posting stands alone, applied in arrival order) and
 * one commit, so a hot wallet takes one row lock and one WAL flush per batch instead of per posting.
 * Nothing waits for a timer: a lone call goes on the next turn of the event loop. Each caller gets what
 * posting alone in that order would have given it, after the commit. Calls with a key already in the
 * batch follow its first call:
 * a replay of its transaction (or a conflict), or, if it was refused, a posting of their own next time.
 * When the call fails as a whole (not a refusal), its postings are retried one by one.
 */
class PostQueue {
  private waiting: Waiting[] = [];
  private inFlight = 0;
  private scheduled = false;

  constructor(private readonly pool: pg.Pool) {}

  submit(p: Posting): Promise<PostResult> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ ...p, resolve, reject });
      this.schedule();
    });
  }

  /**
   * Dispatches on the next turn of the event loop (setImmediate runs after all pending promise
   * callbacks): callers whose previous post just returned, and who post again right away, join the
   * same batch instead of the first of them going alone.
   */
  private schedule(): void {
    if (this.scheduled || this.inFlight >= MAX_IN_FLIGHT || !this.waiting.length) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.pump();
    });
  }

  private pump(): void {
    while (this.inFlight < MAX_IN_FLIGHT && this.waiting.length) {
      const batch = this.waiting.splice(0, MAX_BATCH);
      this.inFlight++;
      void this.run(batch)
        .catch((err: unknown) => {
          for (const w of batch) w.reject(err);
        })
        .finally(() => {
          this.inFlight--;
          this.schedule();
        });
    }
  }

  private async run(batch: Waiting[]): Promise<void> {
    const leaders: Waiting[] = [];
    const followers = new Map<string, Waiting[]>();
    for (const w of batch) {
      const f = followers.get(w.input.idempotencyKey);
      if (f) f.push(w);
      else {
        followers.set(w.input.idempotencyKey, []);
        leaders.push(w);
      }
    }
    let outcomes: Outcome[];
    try {
      outcomes = await callPost(this.pool, leaders, false);
    } catch (err) {
      if (leaders.length === 1) outcomes = [err as Error];
      else {
        outcomes = [];
        for (const l of leaders)
          outcomes.push(
            await callPost(this.pool, [l], false).then(
              (o) => o[0],
              (e: Error) => e,
            ),
          );
      }
    }
    const requeue: Waiting[] = [];
    leaders.forEach((l, i) => {
      const o = outcomes[i];
      const fs = followers.get(l.input.idempotencyKey)!;
      if (isResult(o)) {
        l.resolve(o);
        for (const f of fs) {
          try {
            f.resolve(replay(o.transaction, f.input));
          } catch (e) {
            f.reject(e);
          }
        }
      } else {
        l.reject(o);
        requeue.push(...fs);
      }
    });
    if (requeue.length) this.waiting.unshift(...requeue);
  }
}

const queues = new WeakMap<pg.Pool, PostQueue>();
function queueOf(pool: pg.Pool): PostQueue {
  let q = queues.get(pool);
  if (!q) {
    q = new PostQueue(pool);
    queues.set(pool, q);
  }
  return q;
}
