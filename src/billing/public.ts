/**
 * What other areas may use of billing without reading its tables: the ledger's posting API and wallets, the meter's
 * interval and its lock, and the reads partner settlement and invoices are made of (src/partner/billing); the price
 * catalog (admission checks in partner and orgs), the Toss client (on-prem orders), the checkout sources (the
 * console's content security policy), for src/orgs its card billing in arrears and bank-transfer top-ups, and for
 * src/suite/billing the suite wallet, its usage by member and the posting of what the suite accepted.
 * Anything another area imports from billing comes from here (.dependency-cruiser.cjs, "areas-meet-through-public").
 */
import type { Queryable } from "../store/db.js";
import { findWalletOf, type WalletOwner } from "./ledger/ledger.js";
import { lockInterval } from "./metering/repo.js";
import { intervalStartOf } from "./metering/meter.js";
import { prices } from "./catalog.js";
export { MICRO } from "./catalog.js";
export { tossClient, TossError, type TossClient, type TossPayment } from "./payments/toss.js";
export { checkoutSources, type CheckoutSources } from "./payments/checkout.js";
export { CARD_SAVE_ERRORS, CardCredentials, cardView } from "./payments/schemas.js";
import { creditedSoFar, postpaidChildUsage, type WindowUsage } from "./invoicing/partner-repo.js";

export {
  post,
  postMany,
  postWithSystem,
  walletFor,
  findWalletOf,
  setWalletPolicy,
  systemWallet,
  balance,
  newTransactionId,
  LedgerError,
  type PostInput,
  type Wallet,
} from "./ledger/ledger.js";
export type { WindowUsage };
export { prices, priceOf, isPaid, type PriceCatalog } from "./catalog.js";

// For src/orgs (organization invoices paid by card, and the organization wallet's bank transfers).
export {
  paymentDeps,
  chargeCard,
  savedCard,
  saveCardNow,
  deleteSavedCard,
  startCardBilling,
  endCardBilling,
  periodUsage,
  invoicePaymentKey,
  creditInvoicePayment,
  type PaymentDeps,
  type ChargeOutcome,
  type InvoiceCharge,
  type CardInfo,
  type PeriodUsage,
} from "./invoicing/index.js";
export { bankTransferService, MAX_PENDING } from "./bank/service.js";
// For src/suite/billing (organizations in billing mode suite).
export { startSuiteBilling, isSuiteBilled, suiteUsageByMember, creditSuiteReport } from "./invoicing/suite.js";
export {
  BankTransfer,
  BankTransferConfigFields,
  BankTransferRequest,
  BANK_TRANSFER_REQUEST_ERRORS,
  DepositReport,
  bankTransferConfigView,
  bankTransferPage,
  TaxInvoice,
  ListQuery as BankTransferListQuery,
  view as bankTransferView,
} from "./bank/routes.js";

/** The meter's interval in milliseconds (catalog: 300 s). */
export const meterIntervalMs = (): number => prices().meter_interval_seconds * 1000;
export { intervalStartOf };

/** Waits for the meter batches of that interval in flight (metering's advisory lock), until the caller's commit. */
export const lockMeterInterval = (q: Queryable, intervalStart: Date): Promise<void> => lockInterval(q, intervalStart);

/** What the window's usage postings debited each partner child's postpaid KRW wallet (whole won, > 0). */
export const childUsageOfWindow = (q: Queryable, windowStart: Date): Promise<WindowUsage[]> =>
  postpaidChildUsage(q, windowStart);

/** Refunds and reductions credited to an owner's KRW wallet so far, whole won, net (0 without a wallet). */
export async function creditsOf(q: Queryable, owner: WalletOwner): Promise<number> {
  const wallet = await findWalletOf(q, owner, "KRW");
  return wallet ? creditedSoFar(q, wallet.id) : 0;
}
