/**
 * One call of the SQL function ledger_post_many (migration 008), shared by post()/postMany() (ledger.ts)
 * and the coalescing PostQueue (post-queue.ts): builds its arrays, reads its rows back into transactions,
 * and turns its refusals into LedgerErrors. A module of its own so that neither of those imports the other.
 */
import type { Queryable } from "../../store/db.js";
import {
  LedgerError,
  newTransactionId,
  type Currency,
  type LedgerTransaction,
  type PostInput,
  type SourceType,
} from "./types.js";

export interface PostResult {
  transaction: LedgerTransaction;
  created: boolean;
}

export interface Posting {
  input: PostInput;
  overdraft: boolean;
}
/** a posting's outcome: its result, or why it was refused (LedgerError), or what failed */
export type Outcome = PostResult | Error;

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
export async function callPost(q: Queryable, postings: Posting[], atomic: boolean): Promise<Outcome[]> {
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
