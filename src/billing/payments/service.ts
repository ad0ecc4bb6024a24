/**
 * The payments service that the routes, webhooks and jobs use: one object composed of its parts,
 * top-ups (topups.ts), saved cards (cards.ts) and auto-recharge settings (auto-recharge-settings.ts).
 * The shared pieces live in deps.ts and errors.ts; the ones other files import are re-exported here.
 */
import { paymentHelpers, type PaymentDeps } from "./deps.js";
import { topupsService } from "./topups.js";
import { cardsService } from "./cards.js";
import { autoRechargeSettingsService } from "./auto-recharge-settings.js";

export { AUTO_ORDER_NAME, ORDER_NAME, payerOf, type PaymentDeps } from "./deps.js";
export { providerError } from "./errors.js";

export function paymentsService(deps: PaymentDeps) {
  return {
    ...topupsService(deps),
    ...cardsService(deps),
    ...autoRechargeSettingsService(deps),
    checkAmount: paymentHelpers(deps).checkAmount,
  };
}

export type PaymentsService = ReturnType<typeof paymentsService>;
