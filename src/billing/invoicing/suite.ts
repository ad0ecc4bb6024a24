/**
 * Billing's side of suite billing (src/suite/billing): an organization in billing mode suite has a KRW wallet of
 * policy 'suite' (billed afterwards through the suite: admission lets creation through at any balance, overdue never
 * applies), its usage by member for the suite's reports, and the ledger posting of what the suite accepted: the
 * suite receivable pays the organization's wallet back toward zero, once per report (the ledger key).
 */
import type { Owner } from "../../kernel/owner.js";
import type { Queryable } from "../../store/db.js";
import { findWalletOf, post, systemWallet, walletFor } from "../ledger/ledger.js";
import { walletOwnerOf } from "../owner.js";
import * as repo from "./repo.js";

/** Suite billing starts (or is confirmed): the owner's KRW wallet, created if missing, gets the policy 'suite'. */
export async function startSuiteBilling(q: Queryable, owner: Owner): Promise<void> {
  const wallet = await walletFor(q, walletOwnerOf(owner), "KRW");
  if (wallet.policy !== "suite") await repo.setSuitePolicy(q, wallet.id);
}

/** Whether the owner's KRW wallet is billed through the suite. */
export async function isSuiteBilled(q: Queryable, owner: Owner): Promise<boolean> {
  return (await findWalletOf(q, walletOwnerOf(owner), "KRW"))?.policy === "suite";
}

/**
 * The exact micro-won of usage charged to the owner's own suite wallet for meter intervals starting in [from, to), by
 * creator (usage_records.account_id); empty when the wallet is not a suite wallet.
 */
export async function suiteUsageByMember(
  q: Queryable,
  owner: Owner,
  from: Date,
  to: Date,
): Promise<{ accountId: string; micro: number }[]> {
  const wallet = await findWalletOf(q, walletOwnerOf(owner), "KRW");
  if (wallet?.policy !== "suite") return [];
  const rows = await repo.usageByMember(q, owner, wallet.id, from, to);
  return rows.map((r) => ({ accountId: r.account_id, micro: Number(r.micro) }));
}

/**
 * A usage report the suite accepted: `amountKrw` (> 0) credits the owner's suite wallet from the system wallet
 * 'suite-receivable' (what the suite owes the platform for its members), once per key.
 */
export async function creditSuiteReport(
  q: Queryable,
  owner: Owner,
  report: { key: string; amountKrw: number; memo: string },
): Promise<string> {
  const wallet = await walletFor(q, walletOwnerOf(owner), "KRW");
  const receivable = await systemWallet(q, "suite-receivable", "KRW");
  const { transaction } = await post(q, {
    currency: "KRW",
    source: { type: "invoice", id: report.key },
    idempotencyKey: `suite-report:${report.key}`,
    legs: [
      { walletId: wallet.id, amount: report.amountKrw },
      { walletId: receivable.id, amount: -report.amountKrw },
    ],
    memo: report.memo,
  });
  return transaction.id;
}
