/**
 * What the suite's sign-in offers other areas (kernel.use("suiteEdgeSignIn"), provided only when a suite is
 * configured): the edge's "Sign in with the suite" on a company site's host (src/edge/suite-sign-in.ts).
 */
declare module "../../kernel/capabilities.js" {
  interface Capabilities {
    suiteEdgeSignIn: SuiteEdgeSignIn;
  }
}

export interface SuiteEdgeSignIn {
  /**
   * Begins a suite sign-in that comes back to `returnTo`, the edge's /.platform/suite-landing on a host the edge
   * serves (else ApiError invalid_request), bound to the browser whose binding cookie has the SHA-256 `browserHash`
   * (hex); answers the suite's authorization address. In-process, so the hash never rides a URL.
   */
  start(returnTo: string, browserHash: string): Promise<string>;
  /**
   * A one-time login code for a new sign-in session token; the code must come from a sign-in started with the
   * SHA-256 of `browser` (the site host's binding cookie). Throws ApiError suite_sign_in_failed otherwise.
   */
  exchange(code: string, browser: string): Promise<string>;
}
