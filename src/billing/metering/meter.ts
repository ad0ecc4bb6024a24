/**
 * Metering: turns what every area reports as billable (its MeteringSource, kernel/area.ts) into usage
 * records and charges them to the owners' wallets through the ledger. Billing reads no area's tables.
 *
 * Intervals: fixed, aligned to the epoch, `meter_interval_seconds` long (catalog/prices.json, 300 s).
 * A resource is charged one whole interval when the meter observes it in that interval: the instance
 * price while its state is running, storage while it is running or paused (data kept). The periodic
 * job meters the current interval every minute; intervals in which no meter ran (platform down) are
 * not charged — the platform, not the user, carries an outage.
 *
 * Exactly once: each (resource, interval_start) has one usage record (unique constraint). Each batch
 * (one page of one source, keyset in (owner, id) order) is one transaction: it takes the interval's
 * advisory lock (meters of one interval take turns batch by batch, so the resources it finds without a
 * record are really unmetered), charges them through the ledger, updates the carries and inserts the
 * records with a plain INSERT (a duplicate would violate the unique
 * constraint and abort the batch, never charge twice). A crash loses the whole batch; a rerun or
 * another worker meters it again.
 *
 * Rounding: interval prices are exact micro-won (the catalog refuses prices that aren't). The wallet is the payer's
 * (`MeterOptions.payer`, the kernel's: the owner itself, an account, an organization in prepaid billing or a partner
 * child; the creating member for a company asset of an organization in personal billing). The usage record keeps
 * the resource's owner and creator, and names the wallet charged. Per wallet
 * the new micro-won are added to its carry (`usage_carry`); the whole won are charged
 * (debit the wallet, credit platform:revenue), the remainder (< 1 won) stays in the carry for the next
 * interval. Nothing is lost: charged won * 1e6 + carry = sum of the wallet's usage records, always.
 * Usage already consumed is posted as overdraft: a prepaid wallet may go below 0 and becomes overdue.
 */
import type pg from "pg";
import type { Db, Queryable } from "../../store/db.js";
import { inTransaction } from "../../store/db.js";
import type { MeteredResource, MeteringSource } from "../../kernel/area.js";
import { ownerKey, type Owner } from "../../kernel/owner.js";
import { newTransactionId, postMany, systemWallet, type PostInput } from "../ledger/ledger.js";
import { charge, MICRO, prices, type PriceCatalog } from "../catalog.js";
import * as repo from "./repo.js";

/** Whose wallet pays a resource's usage (Kernel.payer); without one, every owner pays its own. */
export type PayerOf = (q: Queryable, owner: Owner, accountId: string) => Promise<Owner>;

export interface MeterOptions {
  catalog?: PriceCatalog;
  /** the platform's jobs pass kernel.payer (organizations in personal billing charge the creating member) */
  payer?: PayerOf;
  batchSize?: number;
  /** test hook: runs inside each batch's transaction after the records are written, before commit */
  afterBatchWrite?: (batch: number) => Promise<void> | void;
}

export interface MeterResult {
  interval_start: Date;
  records: number;
  charged_krw: number;
  transactions: number;
}

export function intervalStartOf(at: Date, catalog: PriceCatalog = prices()): Date {
  const ms = catalog.meter_interval_seconds * 1000;
  return new Date(Math.floor(at.getTime() / ms) * ms);
}

/**
 * Meters one interval for every resource of every source holding resources in it; safe to run any number
 * of times, anywhere.
 */
export async function meterInterval(
  db: Db,
  sources: readonly MeteringSource[],
  intervalStart: Date,
  opts: MeterOptions = {},
): Promise<MeterResult> {
  const catalog = opts.catalog ?? prices();
  const batchSize = opts.batchSize ?? 5000;
  const intervalEnd = new Date(intervalStart.getTime() + catalog.meter_interval_seconds * 1000);
  const result: MeterResult = { interval_start: intervalStart, records: 0, charged_krw: 0, transactions: 0 };
  const revenue = (await systemWallet(db, "revenue", "KRW")).id;
  let batch = 0;
  for (const source of [...sources].sort((a, b) => a.kind.localeCompare(b.kind))) {
    let after: [string, string] | null = null;
    for (;;) {
      const page = await inTransaction(db, async (tx) => {
        await repo.lockInterval(tx, intervalStart);
        const rows = await source.billable(tx, { createdBefore: intervalEnd, after, limit: batchSize });
        if (!rows.length) return null;
        const metered = await repo.meteredAmong(
          tx,
          intervalStart,
          rows.map((r) => r.id),
        );
        const fresh = rows.filter((r) => !metered.has(r.id));
        if (fresh.length) {
          await chargeBatch(tx, { source, rows: fresh, intervalStart, catalog, revenue, result, payer: opts.payer });
          await opts.afterBatchWrite?.(batch++);
        }
        return rows;
      });
      if (!page) break;
      const last = page[page.length - 1];
      after = [ownerKey(last.owner), last.id];
      if (page.length < batchSize) break;
    }
  }
  return result;
}

/**
 * One batch, set-based: prices in bulk, the owners' wallets in one statement, their carries locked and
 * updated in one statement each (wallet id order), one postMany for the whole batch, one insert of records.
 */
async function chargeBatch(
  tx: pg.PoolClient,
  b: {
    source: MeteringSource;
    rows: MeteredResource[];
    intervalStart: Date;
    catalog: PriceCatalog;
    revenue: string;
    result: MeterResult;
    payer?: PayerOf;
  },
): Promise<void> {
  const { source, rows, intervalStart, catalog } = b;
  const seconds = catalog.meter_interval_seconds;
  const at = intervalStart.toISOString();
  const payers = await payersOf(tx, rows, b.payer);
  const wallets = await repo.ownerWallets(tx, uniqueOwners(payers));
  const walletByRow = new Map(rows.map((r, i) => [r, wallets.get(ownerKey(payers[i]))!]));
  const walletOf = (r: MeteredResource) => walletByRow.get(r)!;
  const charges = rows.map((r) => charge(catalog, source.kind, r, seconds));
  // per wallet the new micro-won; whole won are charged by one ledger transaction per wallet and batch
  const perWallet = new Map<string, number>();
  rows.forEach((r, i) =>
    perWallet.set(
      walletOf(r),
      (perWallet.get(walletOf(r)) ?? 0) + charges[i].instance_micro + charges[i].storage_micro,
    ),
  );
  const walletIds = [...perWallet.keys()].filter((w) => perWallet.get(w)! > 0).sort();
  const txOf = new Map<string, string>();
  if (walletIds.length) {
    const carried = await repo.lockCarries(tx, walletIds);
    const posts: PostInput[] = [];
    const remainders = walletIds.map((w) => {
      const total = carried.get(w)! + perWallet.get(w)!;
      const won = Math.floor(total / MICRO);
      if (won > 0) {
        const id = newTransactionId();
        txOf.set(w, id);
        posts.push({
          id,
          currency: "KRW",
          source: { type: "usage", id: at },
          idempotencyKey: `usage:${w}:${at}:${source.kind}:${rows[0].id}`,
          legs: [
            { walletId: w, amount: -won },
            { walletId: b.revenue, amount: won },
          ],
          memo: `usage ${at}`,
        });
        b.result.charged_krw += won;
      }
      return total - won * MICRO;
    });
    await repo.setCarries(tx, walletIds, remainders);
    // usage already consumed: a prepaid wallet may go below 0 and becomes overdue
    b.result.transactions += (await postMany(tx, posts, { overdraft: true })).length;
  }
  b.result.records += await repo.insertUsageRecords(
    tx,
    intervalStart,
    seconds,
    rows.map((r, i) => ({
      kind: source.kind,
      resourceId: r.id,
      accountId: r.accountId,
      owner: r.owner,
      walletId: walletOf(r),
      size: r.size,
      state: r.state,
      storageGb: r.storageGb,
      instanceMicro: charges[i].instance_micro,
      storageMicro: charges[i].storage_micro,
      transactionId: txOf.get(walletOf(r)) ?? null,
    })),
  );
}

/** Each row's payer, asked once per owner and creator in the batch (only organizations' answers vary). */
async function payersOf(q: Queryable, rows: MeteredResource[], payer: PayerOf | undefined): Promise<Owner[]> {
  if (!payer) return rows.map((r) => r.owner);
  const asked = new Map<string, Promise<Owner>>();
  return Promise.all(
    rows.map((r) => {
      if (r.owner.kind !== "org") return r.owner;
      const key = `${ownerKey(r.owner)}:${r.accountId}`;
      let found = asked.get(key);
      if (!found) asked.set(key, (found = payer(q, r.owner, r.accountId)));
      return found;
    }),
  );
}

function uniqueOwners(owners: Owner[]) {
  const seen = new Map<string, Owner>();
  for (const o of owners) seen.set(ownerKey(o), o);
  return [...seen.values()];
}

/** The periodic job: meters the interval the clock is in. */
export async function meterNow(
  db: Db,
  sources: readonly MeteringSource[],
  now = new Date(),
  opts: Pick<MeterOptions, "payer"> = {},
): Promise<MeterResult> {
  return meterInterval(db, sources, intervalStartOf(now), opts);
}
