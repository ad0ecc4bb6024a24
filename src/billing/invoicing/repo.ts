/**
 * SQL of invoicing in arrears (invoicing/index.ts): an owner's usage over a period, from the ledger (what was
 * debited) and from the usage records (by member and kind), and the wallet policy switch of card billing.
 */
import { allRows, type Queryable } from "../../store/db.js";
import type { SecretBox } from "../../kernel/secrets.js";
import type { CardRow } from "../payments/repo.js";

/**
 * Whole won the wallet's usage postings debited for meter intervals starting in [from, to): metering names each
 * usage posting after its interval (`source_id` = the interval start as toISOString(), meter.ts: fixed-width, so
 * ordered as text), and a month is an exact range whenever the postings were made. Postings are never made before their interval starts, which bounds the scan.
 */
export async function usagePostedKrw(q: Queryable, walletId: string, from: Date, to: Date): Promise<number> {
  const { rows } = await q.query<{ krw: number }>(
    `SELECT coalesce(-sum(e.amount), 0)::bigint AS krw
       FROM ledger_entries e JOIN ledger_transactions t ON t.id = e.transaction_id
      WHERE e.wallet_id = $1 AND e.created_at >= $2::timestamptz - interval '1 day'
        AND t.source_type = 'usage' AND t.source_id COLLATE "C" >= $3 AND t.source_id COLLATE "C" < $4`,
    [walletId, from, from.toISOString(), to.toISOString()],
  );
  return rows[0].krw;
}

/** Exact micro-won of the usage records charged to the wallet for intervals in [from, to), by creator and kind. */
export async function usageLines(
  q: Queryable,
  owner: { kind: string; id: string },
  walletId: string,
  from: Date,
  to: Date,
): Promise<{ account_id: string; kind: string; micro: number }[]> {
  return allRows<{ account_id: string; kind: string; micro: number }>(
    q,
    `SELECT account_id::text, resource_kind AS kind, sum(instance_micro + storage_micro)::bigint AS micro
       FROM usage_records
      WHERE owner_kind = $1 AND owner_id = $2 AND interval_start >= $3 AND interval_start < $4 AND wallet_id = $5
      GROUP BY 1, 2 HAVING sum(instance_micro + storage_micro) > 0 ORDER BY 1, 2`,
    [owner.kind, owner.id, from, to, walletId],
  );
}

/**
 * The wallet's policy for card billing: postpaid while a card pays in arrears; back to prepaid afterwards, overdue
 * at once when what it still owes leaves it below 0 (the ledger only marks overdue at a posting).
 */
export async function setCardPolicy(q: Queryable, walletId: string, card: boolean): Promise<void> {
  await q.query(
    card
      ? "UPDATE ledger_wallets SET policy = 'postpaid', overdue_since = NULL WHERE id = $1 AND policy = 'prepaid'"
      : `UPDATE ledger_wallets SET policy = 'prepaid',
           overdue_since = CASE WHEN balance < 0 THEN coalesce(overdue_since, now()) ELSE NULL END
         WHERE id = $1 AND policy = 'postpaid'`,
    [walletId],
  );
}

/** One of the owner's cards by id, deleted or not (a retry charges the card its attempt began with), reference opened. */
export async function cardById(
  q: Queryable,
  owner: { kind: string; id: string },
  id: string,
  box: SecretBox,
): Promise<CardRow | null> {
  const { rows } = await q.query<CardRow>(
    `SELECT id, account_id, owner_kind, owner_id, provider, provider_ref, customer_ref, brand, last4, exp_month, exp_year,
            created_at, deleted_at
       FROM billing_cards WHERE id = $1 AND owner_kind = $2 AND owner_id = $3`,
    [id, owner.kind, owner.id],
  );
  return rows[0] ? { ...rows[0], provider_ref: box.open(rows[0].provider_ref, "billing_cards.provider_ref") } : null;
}

/** Suite billing starts: the wallet is billed through the suite (no floor, never overdue). */
export async function setSuitePolicy(q: Queryable, walletId: string): Promise<void> {
  await q.query(
    "UPDATE ledger_wallets SET policy = 'suite', overdue_since = NULL WHERE id = $1 AND policy <> 'suite'",
    [walletId],
  );
}

/** Exact micro-won of the usage records charged to the wallet for intervals in [from, to), by creator. */
export async function usageByMember(
  q: Queryable,
  owner: { kind: string; id: string },
  walletId: string,
  from: Date,
  to: Date,
): Promise<{ account_id: string; micro: number }[]> {
  return allRows<{ account_id: string; micro: number }>(
    q,
    `SELECT account_id::text, sum(instance_micro + storage_micro)::bigint AS micro
       FROM usage_records
      WHERE owner_kind = $1 AND owner_id = $2 AND interval_start >= $3 AND interval_start < $4 AND wallet_id = $5
      GROUP BY 1 HAVING sum(instance_micro + storage_micro) > 0 ORDER BY 1`,
    [owner.kind, owner.id, from, to, walletId],
  );
}
