import type { CheckoutSources } from "../billing/public.js";

const NO_CHECKOUT: CheckoutSources = { script: [], frame: [], connect: [] };
const directive = (name: string, sources: string[]) => [name, ...sources].join(" ");

/**
 * The console's Content-Security-Policy: scripts, styles, fonts and API calls from this origin only, no inline
 * script or style element, no plugins, no framing, forms post only here. The payment providers configured for
 * checkout (billing's checkoutSources) add exactly their script, frame and API origins, and only then.
 */
export function consoleCsp(checkout: CheckoutSources = NO_CHECKOUT): string {
  return [
    "default-src 'none'",
    directive("script-src", ["'self'", ...checkout.script]),
    "style-src 'self'",
    "img-src 'self' data:",
    "font-src 'self'",
    directive("connect-src", ["'self'", ...checkout.connect]),
    // without frame-src, frames fall back to default-src 'none'
    ...(checkout.frame.length ? [directive("frame-src", checkout.frame)] : []),
    "manifest-src 'self'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
    "object-src 'none'",
  ].join("; ");
}

/** Headers on every console answer, besides its cache policy. */
export function consoleHeaders(checkout: CheckoutSources = NO_CHECKOUT): Record<string, string> {
  return {
    "content-security-policy": consoleCsp(checkout),
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "same-origin",
    "cross-origin-opener-policy": "same-origin",
    "permissions-policy": "camera=(), microphone=(), geolocation=()",
  };
}

/** The console's client-side routes: each answers with the page, which then draws the route itself. */
export const CONSOLE_PAGES = [
  "/",
  "/signin",
  "/signup",
  "/account",
  "/keys",
  "/databases",
  "/databases/new",
  "/databases/:id",
  "/billing",
  "/pods",
  "/pods/new",
  "/pods/:id",
  "/pod-groups",
  "/pod-groups/new",
  "/pod-groups/:id",
  "/volumes",
  "/templates",
  "/builds",
  "/builds/new",
  "/builds/:id",
  "/cron-jobs",
  "/cron-jobs/:id",
  "/alerts",
  "/sites",
  "/sites/new",
  "/sites/:slug",
  "/domains",
  "/buckets",
  "/buckets/keys",
  "/buckets/:id",
  "/org",
  "/org/suite",
  "/suite",
  "/invite",
  "/partner",
];
