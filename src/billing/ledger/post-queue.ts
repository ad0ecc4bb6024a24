/**
 * The coalescing of concurrent post(pool) calls (see post() in ledger.ts): one queue per pool, batching
 * the postings that arrive while a call of ledger_post_many is in flight into the next call.
 */
import type pg from "pg";
import { LedgerError, type LedgerTransaction, type PostInput } from "./types.js";
import { callPost, type Outcome, type Posting, type PostResult } from "./post-repo.js";

const isResult = (o: Outcome | undefined): o is PostResult => !!o && !(o instanceof Error);

/** Same currency, source and legs (in any order): a second post with the key is then a replay. */
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

/** What a post whose key already has a transaction gets: that transaction, or a conflict. */
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
export function queueOf(pool: pg.Pool): PostQueue {
  let q = queues.get(pool);
  if (!q) {
    q = new PostQueue(pool);
    queues.set(pool, q);
  }
  return q;
}
