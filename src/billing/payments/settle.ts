import type pg from "pg";
import type { PaymentsConfig } from "../../config/config.js";
import type { Db } from "../../store/db.js";
import type { Principal } from "../../auth/principal.js";
import { auditedTransaction } from "../../audit/record.js";
import { walletOwnerOf } from "../owner.js";
import { postWithSystem } from "../ledger/ledger.js";
import { toLedgerUnits } from "./money.js";
import * as repo from "./repo.js";
import type { TopupRow } from "./repo.js";

/**
 * Where every path that learns a payment's outcome (confirm call, webhook, auto-recharge job) converges.
 * Each function runs with the top-up row locked, and the ledger posting carries a key derived from the
 * top-up id, so the wallet is credited once and a refund is debited once, whatever the order and repetition.
 */

export type Locked = { tx: pg.PoolClient; topup: TopupRow };

/**
 * Runs fn in a transaction holding the top-up's row lock (taken before any wallet lock); with the caller
 * of a request, its audit row commits in the same transaction.
 */
export async function withLockedTopup<T>(
  db: Db,
  topupId: string,
  fn: (l: Locked) => Promise<T>,
  caller: Principal | null = null,
): Promise<T> {
  return auditedTransaction(db, caller, async (tx) => {
    const topup = await repo.lockTopup(tx, topupId);
    if (!topup) throw new Error(`top-up ${topupId} vanished`);
    return fn({ tx, topup });
  });
}

export const creditKey = (topupId: string) => `topup:${topupId}:credit`;
export const refundKey = (topupId: string, refundedTotal: number) => `topup:${topupId}:refunded-to:${refundedTotal}`;

/** Credits the wallet for a payment the provider reports as paid; a no-op when already credited. */
export async function credit(l: Locked, providerStatus: string): Promise<TopupRow> {
  const { tx, topup } = l;
  if (topup.credit_transaction_id) {
    if (topup.provider_status !== providerStatus)
      l.topup = await repo.updateTopup(tx, topup.id, { provider_status: providerStatus });
    return l.topup;
  }
  const { transaction } = await postWithSystem(tx, {
    owner: walletOwnerOf(repo.topupOwner(topup)),
    system: "payments-clearing",
    amount: topup.credit_amount,
    currency: topup.currency,
    source: { type: "topup", id: topup.id },
    idempotencyKey: creditKey(topup.id),
    memo: `${topup.provider} top-up ${topup.order_id}`,
  });
  l.topup = await repo.updateTopup(tx, topup.id, {
    status: "succeeded",
    provider_status: providerStatus,
    credit_transaction_id: transaction.id,
    credited_at: new Date(),
    failure_code: null,
    failure_message: null,
  });
  if (topup.origin === "auto_recharge") await repo.releaseAutoRechargeSuccess(tx, topup.id);
  return l.topup;
}

/**
 * Applies the provider's cumulative refunded amount (provider units). Refunds only grow, so a stale or
 * repeated report changes nothing. Money that left is recorded even when the wallet has spent it (the
 * wallet may go negative and becomes overdue).
 */
export async function applyRefund(l: Locked, refundedTotal: number, providerStatus: string): Promise<TopupRow> {
  if (refundedTotal <= l.topup.refunded_amount) return l.topup;
  if (refundedTotal > l.topup.amount)
    throw new Error(`refund ${refundedTotal} exceeds top-up ${l.topup.id} amount ${l.topup.amount}`);
  // a refund implies the payment went through, even if its success has not reached us yet
  if (!l.topup.credit_transaction_id) await credit(l, providerStatus);
  const { tx, topup } = l;
  const delta = toLedgerUnits(topup.currency, refundedTotal - topup.refunded_amount);
  await postWithSystem(
    tx,
    {
      owner: walletOwnerOf(repo.topupOwner(topup)),
      system: "payments-clearing",
      amount: -delta,
      currency: topup.currency,
      source: { type: "refund", id: topup.id },
      idempotencyKey: refundKey(topup.id, refundedTotal),
      memo: `${topup.provider} refund of top-up ${topup.order_id}`,
    },
    { overdraft: true },
  );
  l.topup = await repo.updateTopup(tx, topup.id, {
    refunded_amount: refundedTotal,
    provider_status: providerStatus,
    status: refundedTotal === topup.amount ? "refunded" : "succeeded",
  });
  return l.topup;
}

/** A payment that will not complete: the top-up fails (never after a credit); auto-recharge backs off. */
export async function fail(
  l: Locked,
  code: string,
  message: string,
  providerStatus: string | null,
  config: PaymentsConfig,
): Promise<TopupRow> {
  const { tx, topup } = l;
  if (topup.status !== "pending") return topup;
  l.topup = await repo.updateTopup(tx, topup.id, {
    status: "failed",
    failure_code: code,
    failure_message: message,
    provider_status: providerStatus ?? topup.provider_status,
  });
  if (topup.origin === "auto_recharge") {
    await repo.releaseAutoRechargeFailure(
      tx,
      topup.id,
      `${code}: ${message}`,
      config.autoRechargeRetrySeconds,
      config.autoRechargeRetryMaxSeconds,
    );
  }
  return l.topup;
}

/** An attempt that failed but may be retried on the same top-up (e.g. a declined card in the browser). */
export async function noteAttemptFailure(
  l: Locked,
  code: string,
  message: string,
  providerStatus: string | null,
): Promise<TopupRow> {
  if (l.topup.status !== "pending") return l.topup;
  l.topup = await repo.updateTopup(l.tx, l.topup.id, {
    failure_code: code,
    failure_message: message,
    provider_status: providerStatus ?? l.topup.provider_status,
  });
  return l.topup;
}
