/**
 * The console's Content-Security-Policy: scripts, styles, fonts and API calls from this origin only, no inline
 * script or style element, no plugins, no framing, forms post only here.
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "object-src 'none'",
].join("; ");

/** Headers on every console answer, besides its cache policy. */
export const CONSOLE_HEADERS: Record<string, string> = {
  "content-security-policy": CONSOLE_CSP,
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "same-origin",
  "cross-origin-opener-policy": "same-origin",
  "permissions-policy": "camera=(), microphone=(), geolocation=()",
};

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
];
