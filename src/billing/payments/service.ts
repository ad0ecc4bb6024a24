/**
 * The payments service that the routes, webhooks and jobs use: one object composed of its parts,
 * top-ups (topups.ts), saved cards (cards.ts) and auto-recharge settings (auto-recharge-settings.ts).
 * The shared pieces live in deps.ts and errors.ts; the ones other files import are re-exported here.
 */
import { paymentHelpers, type PaymentDeps } from "./deps.js";
import { topupsService } from "./topups.js";
import { cardsService } from "./cards.js";
import { autoRechargeSettingsService } from "./auto-recharge-settings.js";
import { checkoutConfig } from "./checkout.js";

export { AUTO_ORDER_NAME, ORDER_NAME, payerOf, type PaymentDeps } from "./deps.js";
export { providerError } from "./errors.js";

export function paymentsService(deps: PaymentDeps) {
  return {
    ...topupsService(deps),
    ...cardsService(deps),
    ...autoRechargeSettingsService(deps),
    checkAmount: paymentHelpers(deps).checkAmount,
    /** what the browser needs for the providers' checkout widgets (public) */
    checkoutConfig: () => checkoutConfig(deps.config),
  };
}

export type PaymentsService = ReturnType<typeof paymentsService>;
