import { createRequire } from "node:module";
import type Stripe from "stripe";
import type { PaymentsConfig } from "../../config/config.js";

export type { Stripe };

// the SDK (hundreds of modules) loads when a process first talks to Stripe, not in every process that might
const sdk = () => createRequire(import.meta.url)("stripe") as typeof Stripe;

/**
 * The official SDK pointed at the configured base URL (host/port/protocol), so tests run it against a local
 * server speaking Stripe's API. Network retries stay on: every creating call carries an idempotency key.
 */
export function stripeClient(config: PaymentsConfig["stripe"]): Stripe | null {
  if (!config.secretKey) return null;
  const base = new URL(config.apiBase);
  const protocol = base.protocol === "http:" ? "http" : "https";
  const StripeSdk = sdk();
  return new StripeSdk(config.secretKey, {
    host: base.hostname,
    port: base.port || (protocol === "http" ? 80 : 443),
    protocol,
    maxNetworkRetries: 2,
    timeout: 30_000,
    telemetry: false,
  });
}

/** Card display data of a PaymentMethod: never more than brand, last four digits and expiry. */
export function cardDisplay(pm: Stripe.PaymentMethod): {
  brand: string | null;
  last4: string | null;
  exp_month: number | null;
  exp_year: number | null;
} {
  return {
    brand: pm.card?.brand ?? null,
    last4: pm.card?.last4 ?? null,
    exp_month: pm.card?.exp_month ?? null,
    exp_year: pm.card?.exp_year ?? null,
  };
}

export const isStripeError = (err: unknown): err is Stripe.errors.StripeError =>
  err instanceof sdk().errors.StripeError;
