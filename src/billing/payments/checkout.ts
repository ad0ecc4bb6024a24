/**
 * What a browser needs to finish a top-up in the provider's own checkout UI (the console's billing page): which
 * providers are configured for it, their browser keys and script URLs, and the top-up limits; and the origins
 * the console's Content-Security-Policy must allow for those scripts, frames and API calls.
 */
import type { PaymentsConfig } from "../../config/config.js";

export interface CheckoutConfig {
  stripe: { publishable_key: string; js_url: string } | null;
  toss: { client_key: string; js_url: string } | null;
  topup_limits: { krw: { min: number; max: number }; usd_cents: { min: number; max: number } };
}

/** A provider is offered for checkout when the server can confirm with it (secret key) and the browser can load it (its key). */
export function checkoutConfig(config: PaymentsConfig): CheckoutConfig {
  const { stripe, toss, topup } = config;
  return {
    stripe:
      stripe.secretKey && stripe.publishableKey
        ? { publishable_key: stripe.publishableKey, js_url: stripe.jsUrl }
        : null,
    toss: toss.secretKey && toss.clientKey ? { client_key: toss.clientKey, js_url: toss.jsUrl } : null,
    topup_limits: {
      krw: { min: topup.minKrw, max: topup.maxKrw },
      usd_cents: { min: topup.minUsdCents, max: topup.maxUsdCents },
    },
  };
}

export interface CheckoutSources {
  script: string[];
  frame: string[];
  connect: string[];
}

/**
 * The providers' own hosts: a script loaded from one of them brings that provider's frames and API calls
 * (Stripe's CSP guide: js.stripe.com and its subdomains for scripts and frames, hooks.stripe.com for 3-D Secure
 * frames, api.stripe.com for the calls Stripe.js makes; Toss Payments' widget frames and calls on its own
 * tosspayments.com hosts).
 */
const PROVIDER_HOSTS: Record<string, CheckoutSources> = {
  "js.stripe.com": {
    script: ["https://js.stripe.com", "https://*.js.stripe.com"],
    frame: ["https://js.stripe.com", "https://*.js.stripe.com", "https://hooks.stripe.com"],
    connect: ["https://api.stripe.com"],
  },
  "js.tosspayments.com": {
    script: ["https://js.tosspayments.com"],
    frame: ["https://*.tosspayments.com"],
    connect: ["https://*.tosspayments.com"],
  },
};

/**
 * The CSP sources of the configured checkout scripts, nothing when no provider is offered. A script URL on a
 * provider's own host allows that provider's documented origins; a script from anywhere else (a test's local
 * stand-in) allows its own origin for the script and the frames it mounts, and nothing more.
 */
export function checkoutSources(config: PaymentsConfig): CheckoutSources {
  const offered = checkoutConfig(config);
  const out: CheckoutSources = { script: [], frame: [], connect: [] };
  for (const jsUrl of [offered.stripe?.js_url, offered.toss?.js_url]) {
    if (!jsUrl) continue;
    const url = new URL(jsUrl);
    const known = url.protocol === "https:" ? PROVIDER_HOSTS[url.host] : undefined;
    const add = known ?? { script: [url.origin], frame: [url.origin], connect: [] };
    for (const k of ["script", "frame", "connect"] as const)
      for (const src of add[k]) if (!out[k].includes(src)) out[k].push(src);
  }
  return out;
}
