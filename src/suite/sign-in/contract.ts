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
  /** the platform's GET /v1/auth/suite/start, absolute (the edge sends the browser there with return_to and browser_hash) */
  startUrl: string;
  /**
   * A one-time login code for a new sign-in session token; the code must come from a sign-in started with the
   * SHA-256 of `browser` (the site host's binding cookie). Throws ApiError suite_sign_in_failed otherwise.
   */
  exchange(code: string, browser: string): Promise<string>;
}
