/**
 * What every part of the payments service shares (top-ups, saved cards, auto-recharge settings, and the
 * webhook and job code): its dependencies, the payer of a request, the provider clients and the amount limits.
 * Kept apart from service.ts, which composes those parts, so that they can import it without a cycle.
 */
import type { SecretBox } from "../../kernel/secrets.js";
import type { FastifyBaseLogger } from "fastify";
import type { PaymentsConfig } from "../../config/config.js";
import type { Db } from "../../store/db.js";
import type { Principal } from "../../auth/principal.js";
import { badRequest } from "../../http/errors.js";
import type { Currency } from "../ledger/ledger.js";
import type { Stripe } from "./stripe.js";
import type { TossClient } from "./toss.js";
import { unavailable } from "./errors.js";
import type { Payer } from "./repo.js";

export interface PaymentDeps {
  db: Db;
  config: PaymentsConfig;
  stripe: Stripe | null;
  toss: TossClient | null;
  log: FastifyBaseLogger;
  /** seals card references at rest */
  secrets: SecretBox;
}

/** The caller as payer: its owner pays and holds the card and settings, its account acts. */
export const payerOf = (p: Principal): Payer => ({ owner: p.owner, accountId: p.accountId });

export const ORDER_NAME = "Platform credit top-up";
export const AUTO_ORDER_NAME = "Platform credit auto-recharge";

/**
 * The provider clients (one that is not configured answers provider_unavailable) and the top-up limits,
 * for each part of the service.
 */
export function paymentHelpers(deps: PaymentDeps) {
  const { config } = deps;

  function stripe(): Stripe {
    if (!deps.stripe) throw unavailable("stripe");
    return deps.stripe;
  }
  function toss(): TossClient {
    if (!deps.toss) throw unavailable("toss");
    return deps.toss;
  }

  function checkAmount(currency: Currency, amount: number): void {
    const [min, max, unit] =
      currency === "KRW"
        ? [config.topup.minKrw, config.topup.maxKrw, "KRW"]
        : [config.topup.minUsdCents, config.topup.maxUsdCents, "USD cents"];
    if (amount < min || amount > max)
      throw badRequest("amount_out_of_range", `amount must be between ${min} and ${max} ${unit}.`);
  }

  return { stripe, toss, checkAmount };
}
