/**
 * Settlement (README.md here): every 5-minute meter window, the usage postings metering made on postpaid children's
 * wallets move to their partner's wallet (owner kind partner, postpaid: negative = owed). Exactly once per child and
 * window: one transaction per window holds the window's advisory lock (and the meter's lock of that interval),
 * writes the settlement rows (unique per child and window), the window's row, the month totals and one ledger
 * posting per child with key partner-settle:<child>:<window-start>. A process killed midway commits nothing; the next
 * run (here or elsewhere) settles the window whole.
 */
import type { Db } from "../../store/db.js";
import { inTransaction } from "../../store/db.js";
import {
  childUsageOfWindow,
  intervalStartOf,
  lockMeterInterval,
  meterIntervalMs,
  newTransactionId,
  postMany,
  walletFor,
  type PostInput,
} from "../../billing/public.js";
import { recordEvent } from "../../events/public.js";
import { accountOwner } from "../../kernel/owner.js";
import * as repo from "./repo.js";

/** windows a stopped platform missed are caught up at most this far back (the meter charges no outage anyway) */
const CATCH_UP_WINDOWS = 288;
/** postings per ledger call, inside the window's one transaction */
const CHUNK = 2500;

export const monthOf = (d: Date) => d.toISOString().slice(0, 7);
export const settleKey = (childId: string, windowStart: Date) =>
  `partner-settle:${childId}:${windowStart.toISOString()}`;

export interface SettleResult {
  window_start: Date;
  children: number;
  krw: number;
  /** false when another run had settled the window already */
  settled: boolean;
}

export interface SettleOptions {
  /** test hook: inside the window's transaction after everything is written, before commit */
  beforeCommit?: () => Promise<void>;
}

export async function settleWindow(db: Db, windowStart: Date, opts: SettleOptions = {}): Promise<SettleResult> {
  return inTransaction(db, async (tx) => {
    const result: SettleResult = { window_start: windowStart, children: 0, krw: 0, settled: false };
    await repo.lockWindow(tx, windowStart);
    if (await repo.windowSettled(tx, windowStart)) return result;
    // a meter batch of this interval still in flight commits first
    await lockMeterInterval(tx, windowStart);
    const usage = await childUsageOfWindow(tx, windowStart);
    const partners = await repo.postpaidPartnersOf(
      tx,
      usage.map((u) => u.child_id),
    );
    const partnerWallets = new Map<string, string>();
    for (const id of new Set(partners.values()))
      partnerWallets.set(id, (await walletFor(tx, { kind: "partner", id }, "KRW")).id);
    const rows: repo.SettlementRow[] = [];
    const posts: PostInput[] = [];
    const perPartner = new Map<string, number>();
    for (const u of usage) {
      const partnerId = partners.get(u.child_id);
      if (!partnerId) continue;
      const id = newTransactionId();
      rows.push({ child_id: u.child_id, partner_id: partnerId, amount_krw: u.krw, transaction_id: id });
      posts.push({
        id,
        currency: "KRW",
        source: { type: "transfer", id: `${u.child_id}:${windowStart.toISOString()}` },
        idempotencyKey: settleKey(u.child_id, windowStart),
        legs: [
          { walletId: u.wallet_id, amount: u.krw },
          { walletId: partnerWallets.get(partnerId)!, amount: -u.krw },
        ],
        memo: `partner settlement ${windowStart.toISOString()}`,
      });
      perPartner.set(partnerId, (perPartner.get(partnerId) ?? 0) + u.krw);
      result.krw += u.krw;
    }
    await repo.insertSettlements(tx, windowStart, rows);
    for (let i = 0; i < posts.length; i += CHUNK) await postMany(tx, posts.slice(i, i + CHUNK));
    await repo.addMonthUsage(tx, monthOf(windowStart), perPartner);
    await repo.markWindow(tx, windowStart, rows.length);
    // one event per partner whose children's usage this window moved (a failed run commits nothing and the next
    // run settles the window whole, so there is no failed settlement for a partner to see)
    for (const [partnerId, krw] of perPartner)
      await recordEvent(tx, {
        type: "partner.settlement.completed",
        owner: accountOwner(partnerId),
        resource: { kind: "partner_settlement", id: `${partnerId}:${windowStart.toISOString()}` },
        data: {
          window_start: windowStart.toISOString(),
          children: rows.filter((r) => r.partner_id === partnerId).length,
          amount_krw: krw,
        },
      });
    await opts.beforeCommit?.();
    result.children = rows.length;
    result.settled = true;
    return result;
  });
}

/**
 * The windows due: each one that ended a whole interval ago (metering of a window may still commit just after it
 * ends), from the one after the last settled (at most a day back) up to now's.
 */
export async function settleDue(db: Db, now = new Date(), opts: SettleOptions = {}): Promise<SettleResult[]> {
  const step = meterIntervalMs();
  const due = intervalStartOf(now).getTime() - 2 * step;
  const last = await repo.lastSettledWindow(db);
  let from = last ? last.getTime() + step : due;
  from = Math.max(from, due - (CATCH_UP_WINDOWS - 1) * step);
  const out: SettleResult[] = [];
  for (let w = from; w <= due; w += step) out.push(await settleWindow(db, new Date(w), opts));
  return out;
}
