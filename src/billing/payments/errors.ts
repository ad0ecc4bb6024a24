/** The ApiErrors of the payments service: an unconfigured provider, a provider's failure, a declined payment. */
import { ApiError, badRequest } from "../../http/errors.js";
import type { Provider } from "./money.js";
import { isStripeError } from "./stripe.js";

export const unavailable = (provider: Provider) =>
  new ApiError("provider_unavailable", `Payments through ${provider} are not configured on this platform.`);
export const providerError = (provider: Provider, detail: string) =>
  new ApiError("provider_error", `${provider} could not complete the request (${detail}); retry later.`);
export const paymentFailed = (code: string, message: string) =>
  new ApiError("payment_failed", `The payment failed: ${message} (${code}).`);

/** Maps a Stripe SDK error: card errors are the customer's, bad requests are 400, the rest is the provider's. */
export function stripeFailure(err: unknown): ApiError {
  if (!isStripeError(err)) return providerError("stripe", err instanceof Error ? err.message : String(err));
  if (err.type === "StripeCardError")
    return paymentFailed(err.decline_code ?? err.code ?? "card_declined", err.message);
  if (err.type === "StripeInvalidRequestError" && (err.statusCode ?? 0) < 500)
    return badRequest("invalid_payment_method", err.message);
  return providerError("stripe", err.message);
}
