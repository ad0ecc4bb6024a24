import type { Currency } from "../ledger/ledger.js";

export type Provider = "stripe" | "toss";
export const PROVIDERS: readonly Provider[] = ["stripe", "toss"];

/** Each card provider charges one currency here: Stripe for global USD payments, Toss Payments for KRW. */
export const PROVIDER_CURRENCY: Record<Provider, Currency> = { stripe: "USD", toss: "KRW" };

/**
 * Top-up, card and auto-recharge amounts are in the provider's smallest unit (USD cents, KRW won); the ledger
 * keeps USD in micro-dollars. Both are integers, and the conversion is exact.
 */
export function toLedgerUnits(currency: Currency, providerAmount: number): number {
  const n = currency === "USD" ? providerAmount * 10_000 : providerAmount;
  if (!Number.isSafeInteger(n)) throw new Error(`amount ${providerAmount} ${currency} is out of range`);
  return n;
}
