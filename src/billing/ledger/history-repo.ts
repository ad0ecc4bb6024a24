import type { Queryable } from "../../store/db.js";
import { keysetPage, sequenceCursor } from "../../http/keyset-page.js";
import type { SourceType } from "./ledger.js";

export interface HistoryFilter {
  type?: SourceType;
  currency?: "KRW" | "USD";
  from?: Date;
  to?: Date;
}

/**
 * The owner's side of its transactions, newest first: one row per transaction with the net amount on
 * the owner's wallet and the balance after it. The cursor is the transaction's global sequence number,
 * so pages stay stable while new postings arrive.
 */
export async function listOwnerTransactions(
  q: Queryable,
  owner: { kind: string; id: string },
  limit: number,
  cursor: string | undefined,
  f: HistoryFilter,
) {
  const before = sequenceCursor(cursor);
  const { rows } = await q.query<{
    seq: number;
    id: string;
    source_type: string;
    source_id: string;
    currency: string;
    memo: string | null;
    created_at: Date;
    amount: number;
    balance_after: number | null;
  }>(
    `SELECT t.seq, t.id, t.source_type, t.source_id, t.currency, t.memo, t.created_at,
            sum(e.amount)::bigint AS amount, (array_agg(e.balance_after ORDER BY e.id DESC))[1] AS balance_after
       FROM ledger_wallets w
       JOIN ledger_entries e ON e.wallet_id = w.id
       JOIN ledger_transactions t ON t.id = e.transaction_id
      WHERE w.owner_kind = $1 AND w.owner_id = $2
        AND ($3::bigint IS NULL OR t.seq < $3::bigint)
        AND ($4::text IS NULL OR t.source_type = $4) AND ($5::text IS NULL OR t.currency = $5)
        AND ($6::timestamptz IS NULL OR t.created_at >= $6) AND ($7::timestamptz IS NULL OR t.created_at < $7)
      GROUP BY t.seq, t.id ORDER BY t.seq DESC LIMIT $8`,
    [owner.kind, owner.id, before, f.type ?? null, f.currency ?? null, f.from ?? null, f.to ?? null, limit + 1],
  );
  return keysetPage(
    rows,
    limit,
    (r) => ({
      id: r.id,
      type: r.source_type,
      source_id: r.source_id,
      currency: r.currency,
      amount: r.amount,
      balance_after: r.balance_after,
      memo: r.memo,
      created_at: r.created_at.toISOString(),
    }),
    (r) => String(r.seq),
  );
}
