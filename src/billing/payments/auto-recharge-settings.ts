/**
 * Auto-recharge settings: whether, below which balance and by how much the saved card is charged. The
 * charging itself is the periodic job in auto-recharge.ts.
 */
import type { Principal } from "../../auth/principal.js";
import { auditedTransaction } from "../../audit/record.js";
import { badRequest } from "../../http/errors.js";
import type { Currency } from "../ledger/ledger.js";
import { PROVIDER_CURRENCY } from "./money.js";
import { payerOf, paymentHelpers, type PaymentDeps } from "./deps.js";
import * as repo from "./repo.js";

export function autoRechargeSettingsService(deps: PaymentDeps) {
  const { db } = deps;
  const { checkAmount } = paymentHelpers(deps);

  async function getAutoRecharge(p: Principal) {
    return { settings: await repo.findAutoRecharge(db, p.owner), card: await repo.liveCard(db, p.owner, deps.secrets) };
  }

  async function setAutoRecharge(p: Principal, input: { enabled: boolean; threshold: number; amount: number }) {
    const card = await repo.liveCard(db, p.owner, deps.secrets);
    if (input.enabled && !card)
      throw badRequest("card_required", "Save a card with POST /v1/billing/cards before enabling auto-recharge.");
    const existing = await repo.findAutoRecharge(db, p.owner);
    const currency: Currency = card ? PROVIDER_CURRENCY[card.provider] : (existing?.currency ?? "KRW");
    checkAmount(currency, input.amount);
    const settings = await auditedTransaction(db, p, (tx) =>
      repo.upsertAutoRecharge(tx, payerOf(p), {
        enabled: input.enabled,
        currency,
        threshold: input.threshold,
        amount: input.amount,
      }),
    );
    return { settings, card };
  }

  return { getAutoRecharge, setAutoRecharge };
}
