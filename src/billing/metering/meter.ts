/**
 * Metering: turns running databases into usage records and charges them through the ledger.
 *
 * Intervals: fixed, aligned to the epoch, `meter_interval_seconds` long (catalog/prices.json, 300 s).
 * A resource is charged one whole interval when the meter observes it in that interval: the instance
 * price while its state is running, storage while it is running or paused (data kept). The periodic
 * job meters the current interval every minute; intervals in which no meter ran (platform down) are
 * not charged — the platform, not the user, carries an outage.
 *
 * Exactly once: each (resource, interval_start) has one usage record (unique constraint). Each batch
 * is one transaction: it takes the interval's advisory lock (meters of one interval take turns batch by
 * batch, so the unmetered resources it reads are really unmetered), charges them through the ledger,
 * updates the carry and inserts the records with a plain INSERT (a duplicate would violate the unique
 * constraint and abort the batch, never charge twice). A crash loses the whole batch; a rerun or
 * another worker meters it again.
 *
 * Rounding: interval prices are exact micro-won (the catalog refuses prices that aren't). Per wallet
 * the new micro-won are added to its carry (`usage_carry`); the whole won are charged
 * (debit the wallet, credit platform:revenue), the remainder (< 1 won) stays in the carry for the next
 * interval. Nothing is lost: charged won * 1e6 + carry = sum of the wallet's usage records, always.
 * Usage already consumed is posted as overdraft: a prepaid wallet may go below 0 and becomes overdue.
 */
import { randomUUID } from "node:crypto";
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

const METER_LOCK = 7_312_004;

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
  const batchSize = opts.batchSize ?? 2500;
  const intervalEnd = new Date(intervalStart.getTime() + seconds * 1000);
  const result: MeterResult = { interval_start: intervalStart, records: 0, charged_krw: 0, transactions: 0 };
  const revenue = (await systemWallet(db, "revenue", "KRW")).id;
  // keyset over (account, resource): an account's resources come in one batch, so one ledger transaction per wallet and interval
  let after = ["00000000-0000-0000-0000-000000000000", "00000000-0000-0000-0000-000000000000"];
  for (let batch = 0; ; batch++) {
    const done = await inTransaction(db, async (tx) => {
      // meters of one interval take turns batch by batch, so the candidates read below are exactly the unmetered ones
      await tx.query("SELECT pg_advisory_xact_lock($1, $2)", [METER_LOCK, Math.floor(intervalStart.getTime() / 1000 / 60)]);
      const { rows } = await tx.query<Candidate>(
        `SELECT d.id, d.account_id, d.size, d.storage_gb, d.state FROM databases d
          WHERE d.state IN ('running', 'paused') AND d.created_at < $2 AND (d.account_id, d.id) > ($3::uuid, $4::uuid)
            AND NOT EXISTS (SELECT 1 FROM usage_records u WHERE u.resource_id = d.id AND u.interval_start = $1)
          ORDER BY d.account_id, d.id LIMIT $5`,
        [intervalStart, intervalEnd, after[0], after[1], batchSize],
      );
      if (!rows.length) return true;
      after = [rows[rows.length - 1].account_id, rows[rows.length - 1].id];
      const wallets = await accountWallets(tx, [...new Set(rows.map((r) => r.account_id))]);
      const charges = rows.map((r) => databaseCharge(catalog, r, seconds));
      // per wallet: the new micro-won; whole won are charged by one ledger transaction per wallet and batch
      const perWallet = new Map<string, number>();
      rows.forEach((r, i) => {
        const w = wallets.get(r.account_id)!;
        perWallet.set(w, (perWallet.get(w) ?? 0) + charges[i].instance_micro + charges[i].storage_micro);
      });
      const walletIds = [...perWallet.keys()].filter((w) => perWallet.get(w)! > 0).sort();
      const txOf = new Map<string, string>();
      if (walletIds.length) {
        // the carry rows are locked by the upsert (wallet order)
        const carry = await tx.query<{ wallet_id: string; micro: number }>(
          `INSERT INTO usage_carry AS c (wallet_id, micro) SELECT w, 0 FROM unnest($1::uuid[]) AS w ORDER BY w
           ON CONFLICT (wallet_id) DO UPDATE SET micro = c.micro RETURNING wallet_id, micro`,
          [walletIds],
        );
        const carried = new Map(carry.rows.map((r) => [r.wallet_id, r.micro]));
        const posts: PostInput[] = [];
        const remainders: number[] = [];
        for (const w of walletIds) {
          const total = carried.get(w)! + perWallet.get(w)!;
          const won = Math.floor(total / MICRO);
          remainders.push(total - won * MICRO);
          if (won > 0) {
            const id = randomUUID();
            txOf.set(w, id);
            posts.push({
              id, currency: "KRW", source: { type: "usage", id: intervalStart.toISOString() },
              idempotencyKey: `usage:${w}:${intervalStart.toISOString()}:${rows[0].id}`, legs: [{ walletId: w, amount: -won }, { walletId: revenue, amount: won }],
              memo: `usage ${intervalStart.toISOString()}`,
            });
            result.charged_krw += won;
          }
        }
        await tx.query("UPDATE usage_carry c SET micro = v.m FROM unnest($1::uuid[], $2::bigint[]) AS v(w, m) WHERE c.wallet_id = v.w", [walletIds, remainders]);
        result.transactions += (await postMany(tx, posts, { overdraft: true })).length;
      }
      // a plain insert: under the interval lock these rows are new; a duplicate would abort the batch (unique constraint)
      const inserted = await tx.query(
        `INSERT INTO usage_records (resource_kind, resource_id, account_id, owner_kind, owner_id, wallet_id, interval_start, interval_seconds, size, state, storage_gb, instance_micro, storage_micro, transaction_id)
         SELECT 'database', r, a, 'account', a, w, $1, $2, s, st, g, im, sm, t
           FROM unnest($3::uuid[], $4::uuid[], $5::uuid[], $6::text[], $7::text[], $8::int[], $9::bigint[], $10::bigint[], $11::uuid[]) AS v(r, a, w, s, st, g, im, sm, t)`,
        [intervalStart, seconds, rows.map((r) => r.id), rows.map((r) => r.account_id), rows.map((r) => wallets.get(r.account_id)),
          rows.map((r) => r.size), rows.map((r) => r.state), rows.map((r) => r.storage_gb),
          charges.map((c) => c.instance_micro), charges.map((c) => c.storage_micro), rows.map((r) => txOf.get(wallets.get(r.account_id)!) ?? null)],
      );
      result.records += inserted.rowCount ?? 0;
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
