/**
 * Metering: turns running databases into usage records and charges them through the ledger.
 *
 * Intervals: fixed, aligned to the epoch, `meter_interval_seconds` long (catalog/prices.json, 300 s).
 * A resource is charged one whole interval when the meter observes it in that interval: the instance
 * price while its state is running, storage while it is running or paused (data kept). The periodic
 * job meters the current interval every minute; intervals in which no meter ran (platform down) are
 * not charged — the platform, not the user, carries an outage.
 *
 * Exactly once: each (resource, interval_start) has one usage record (unique constraint). A batch
 * inserts its records with ON CONFLICT DO NOTHING and charges only the rows it inserted, in the same
 * transaction as the ledger postings and the carry. So a crash loses the whole batch (rerun meters it
 * again), and concurrent meters wait on each other's uncommitted rows and then skip them. Batches insert
 * in resource id order, so two meters can't deadlock.
 *
 * Rounding: interval prices are exact micro-won (the catalog refuses prices that aren't). Per wallet
 * the new micro-won are added to its carry (`usage_carry`); the whole won are charged
 * (debit the wallet, credit platform:revenue), the remainder (< 1 won) stays in the carry for the next
 * interval. Nothing is lost: charged won * 1e6 + carry = sum of the wallet's usage records, always.
 * Usage already consumed is posted as overdraft: a prepaid wallet may go below 0 and becomes overdue.
 */
import type { Db, Queryable } from "../../store/db.js";
import { inTransaction } from "../../store/db.js";
import { postMany, systemWallet, type PostInput } from "../ledger/ledger.js";
import { databaseCharge, MICRO, prices, type PriceCatalog } from "../catalog.js";

export interface MeterOptions {
  catalog?: PriceCatalog;
  batchSize?: number;
  /** test hook: runs inside each batch's transaction after the records are written, before commit */
  afterBatchWrite?: (batch: number) => Promise<void> | void;
}

export interface MeterResult { interval_start: Date; records: number; charged_krw: number; transactions: number }

export function intervalStartOf(at: Date, catalog: PriceCatalog = prices()): Date {
  const ms = catalog.meter_interval_seconds * 1000;
  return new Date(Math.floor(at.getTime() / ms) * ms);
}

interface Candidate { id: string; account_id: string; size: string; storage_gb: number; state: string }

/** Account wallets (KRW) for these accounts, created on first use, in one statement. */
async function accountWallets(q: Queryable, accountIds: string[]): Promise<Map<string, string>> {
  await q.query(
    `INSERT INTO ledger_wallets (id, owner_kind, owner_id, currency, policy, balance)
     SELECT gen_random_uuid(), 'account', a, 'KRW', 'prepaid', 0 FROM unnest($1::text[]) AS a
     ON CONFLICT (owner_kind, owner_id, currency) DO NOTHING`,
    [accountIds],
  );
  const { rows } = await q.query<{ id: string; owner_id: string }>(
    "SELECT id, owner_id FROM ledger_wallets WHERE owner_kind = 'account' AND currency = 'KRW' AND owner_id = ANY($1::text[])", [accountIds]);
  return new Map(rows.map((r) => [r.owner_id, r.id]));
}

/** Meters one interval for every database holding resources in it; safe to run any number of times, anywhere. */
export async function meterInterval(db: Db, intervalStart: Date, opts: MeterOptions = {}): Promise<MeterResult> {
  const catalog = opts.catalog ?? prices();
  const seconds = catalog.meter_interval_seconds;
  const batchSize = opts.batchSize ?? 1000;
  const intervalEnd = new Date(intervalStart.getTime() + seconds * 1000);
  const result: MeterResult = { interval_start: intervalStart, records: 0, charged_krw: 0, transactions: 0 };
  const revenue = (await systemWallet(db, "revenue", "KRW")).id;
  let after = "00000000-0000-0000-0000-000000000000";
  for (let batch = 0; ; batch++) {
    const done = await inTransaction(db, async (tx) => {
      const { rows } = await tx.query<Candidate>(
        `SELECT d.id, d.account_id, d.size, d.storage_gb, d.state FROM databases d
          WHERE d.state IN ('running', 'paused') AND d.created_at < $2 AND d.id > $3
            AND NOT EXISTS (SELECT 1 FROM usage_records u WHERE u.resource_id = d.id AND u.interval_start = $1)
          ORDER BY d.id LIMIT $4`,
        [intervalStart, intervalEnd, after, batchSize],
      );
      if (!rows.length) return true;
      after = rows[rows.length - 1].id;
      const wallets = await accountWallets(tx, [...new Set(rows.map((r) => r.account_id))]);
      const charges = rows.map((r) => databaseCharge(catalog, r, seconds));
      const inserted = await tx.query<{ id: number; wallet_id: string; micro: number }>(
        `INSERT INTO usage_records (resource_kind, resource_id, account_id, wallet_id, interval_start, interval_seconds, size, state, storage_gb, instance_micro, storage_micro)
         SELECT 'database', r, a, w, $1, $2, s, st, g, im, sm
           FROM unnest($3::uuid[], $4::uuid[], $5::uuid[], $6::text[], $7::text[], $8::int[], $9::bigint[], $10::bigint[]) WITH ORDINALITY AS v(r, a, w, s, st, g, im, sm, o)
          ORDER BY o
         ON CONFLICT (resource_id, interval_start) DO NOTHING
         RETURNING id, wallet_id, instance_micro + storage_micro AS micro`,
        [intervalStart, seconds, rows.map((r) => r.id), rows.map((r) => r.account_id), rows.map((r) => wallets.get(r.account_id)),
          rows.map((r) => r.size), rows.map((r) => r.state), rows.map((r) => r.storage_gb),
          charges.map((c) => c.instance_micro), charges.map((c) => c.storage_micro)],
      );
      result.records += inserted.rows.length;
      // per wallet: the new micro-won and the records they come from
      const perWallet = new Map<string, { micro: number; ids: number[] }>();
      for (const r of inserted.rows) {
        const w = perWallet.get(r.wallet_id) ?? { micro: 0, ids: [] };
        w.micro += r.micro;
        w.ids.push(r.id);
        perWallet.set(r.wallet_id, w);
      }
      const walletIds = [...perWallet.keys()].filter((w) => perWallet.get(w)!.micro > 0).sort();
      if (walletIds.length) {
        // the carry rows are locked by the upsert (wallet order), so concurrent meters add to them one at a time
        const carry = await tx.query<{ wallet_id: string; micro: number }>(
          `INSERT INTO usage_carry AS c (wallet_id, micro) SELECT w, 0 FROM unnest($1::uuid[]) AS w ORDER BY w
           ON CONFLICT (wallet_id) DO UPDATE SET micro = c.micro RETURNING wallet_id, micro`,
          [walletIds],
        );
        const carried = new Map(carry.rows.map((r) => [r.wallet_id, r.micro]));
        const posts: PostInput[] = [];
        const remainders: number[] = [];
        const postedWallets: string[] = [];
        for (const w of walletIds) {
          const total = carried.get(w)! + perWallet.get(w)!.micro;
          const won = Math.floor(total / MICRO);
          remainders.push(total - won * MICRO);
          if (won > 0) {
            postedWallets.push(w);
            posts.push({
              currency: "KRW", source: { type: "usage", id: intervalStart.toISOString() },
              idempotencyKey: `usage:${w}:${perWallet.get(w)!.ids[0]}`, legs: [{ walletId: w, amount: -won }, { walletId: revenue, amount: won }],
              memo: `usage ${intervalStart.toISOString()}`,
            });
            result.charged_krw += won;
          }
        }
        await tx.query("UPDATE usage_carry c SET micro = v.m FROM unnest($1::uuid[], $2::bigint[]) AS v(w, m) WHERE c.wallet_id = v.w", [walletIds, remainders]);
        const posted = await postMany(tx, posts, { overdraft: true });
        result.transactions += posted.length;
        // link each record to the transaction that charged the won it completed
        await tx.query(
          `UPDATE usage_records u SET transaction_id = v.t FROM unnest($1::uuid[], $2::uuid[]) AS v(w, t)
            WHERE u.wallet_id = v.w AND u.id = ANY($3::bigint[])`,
          [postedWallets, posted.map((p) => p.transaction.id), inserted.rows.map((r) => r.id)],
        );
      }
      await opts.afterBatchWrite?.(batch);
      return false;
    });
    if (done) return result;
  }
}

/** The periodic job: meters the interval the clock is in. */
export async function meterNow(db: Db, now = new Date()): Promise<MeterResult> {
  return meterInterval(db, intervalStartOf(now));
}
