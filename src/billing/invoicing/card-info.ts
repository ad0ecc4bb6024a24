import type { Provider } from "../payments/money.js";
import type { CardRow } from "../payments/repo.js";

/** A saved card as invoices show it: display data only. */
export interface CardInfo {
  id: string;
  provider: Provider;
  brand: string | null;
  last4: string | null;
  exp_month: number | null;
  exp_year: number | null;
  created_at: Date;
}

/** Picks the display data from a card (a stored row, or display data to render). */
export const cardInfo = (c: CardRow | CardInfo): CardInfo => ({
  id: c.id,
  provider: c.provider,
  brand: c.brand,
  last4: c.last4,
  exp_month: c.exp_month,
  exp_year: c.exp_year,
  created_at: c.created_at,
});
