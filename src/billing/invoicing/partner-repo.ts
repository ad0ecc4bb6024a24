/**
 * SQL billing answers partner settlement with (src/partner/billing, through billing/public.ts): the usage postings
 * of one meter window on partner children's postpaid wallets, and the refunds and reductions credited to a wallet.
 */
import type { Queryable } from "../../store/db.js";

export interface WindowUsage {
  child_id: string;
  wallet_id: string;
  /** whole won the window's usage postings debited the child's wallet */
  krw: number;
}

/**
 * Per partner child with a postpaid KRW wallet: what metering's usage postings of the window debited it
 * (`source_id` = the interval start, meter.ts), through the index on (source_type, source_id).
 */
export async function postpaidChildUsage(q: Queryable, windowStart: Date): Promise<WindowUsage[]> {
  const { rows } = await q.query<WindowUsage>(
    `SELECT w.owner_id::text AS child_id, w.id::text AS wallet_id, (-sum(e.amount))::bigint AS krw
       FROM ledger_transactions t
       JOIN ledger_entries e ON e.transaction_id = t.id
       JOIN ledger_wallets w ON w.id = e.wallet_id
      WHERE t.source_type = 'usage' AND t.source_id = $1
        AND w.owner_kind = 'partner_child' AND w.currency = 'KRW' AND w.policy = 'postpaid'
      GROUP BY w.owner_id, w.id HAVING -sum(e.amount) > 0
      ORDER BY w.owner_id`,
    [windowStart.toISOString()],
  );
  return rows.map((r) => ({ ...r, krw: Number(r.krw) }));
}

/**
 * Whole units refunds and reductions (sources refund, adjustment) have credited the wallet so far, net: found
 * through the index on source_type (such postings are rare), not by scanning the wallet's entries.
 */
export async function creditedSoFar(q: Queryable, walletId: string): Promise<number> {
  const { rows } = await q.query<{ amount: string }>(
    `SELECT coalesce(sum(e.amount), 0)::bigint AS amount
       FROM ledger_transactions t JOIN ledger_entries e ON e.transaction_id = t.id
      WHERE t.source_type IN ('refund', 'adjustment') AND e.wallet_id = $1`,
    [walletId],
  );
  return Math.max(0, Number(rows[0].amount));
}
