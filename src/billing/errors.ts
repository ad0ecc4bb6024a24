import type { ErrorTable } from "../http/errors.js";

/** The error codes of billing (payments, bank transfers, the ledger): code → [HTTP status, one-line meaning]; merged into the one catalog at start-up. */
export const BILLING_ERROR_CODES = {
  amount_out_of_range: [400, "The amount is outside the allowed limits."],
  currency_not_supported: [400, "The provider does not take this currency."],
  card_required: [400, "No saved card."],
  invalid_payment_key: [400, "The payment key is not valid."],
  invalid_payment_method: [400, "The payment method is not valid."],
  payment_key_required: [400, "The payment key is required."],
  payment_rejected: [400, "The provider rejected the payment."],
  invalid_signature: [400, "The webhook signature does not verify."],
  auth_key_required: [400, "The card authorization key is required."],
  invalid_auth_key: [400, "The card authorization key is not valid."],
  bank_transfer_unavailable: [400, "Bank transfers are not configured."],
  invalid_business_number: [400, "The business registration number is not valid."],
  tax_invoice_required: [400, "A tax invoice request needs business information."],
  payment_failed: [402, "The card was declined."],
  deposit_reported: [409, "The deposit was already reported."],
  too_many_pending: [409, "Too many pending requests."],
  topup_not_pending: [409, "The top-up is no longer pending."],
  payment_key_mismatch: [409, "The payment key does not match the top-up."],
  card_save_in_progress: [409, "A card is being saved."],
  idempotency_conflict: [409, "A ledger posting with this key has other content."],
  provider_unavailable: [503, "The payment provider is not configured."],
  webhook_not_configured: [503, "The webhook secret is not configured."],
  spend_cap_reached: [402, "The account or app spend cap is reached; running replicas stay, growth stops."],
} as const satisfies ErrorTable;
