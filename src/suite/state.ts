import type { Platform } from "../kernel/context.js";
import { ApiError } from "../http/errors.js";
import type { SuiteConfig } from "./config.js";
import type { SuiteProvider } from "./provider.js";

/** The suite core's per-process state; the sign-in, directory and billing parts read it with `suiteOf`. */
export interface SuiteState {
  config: SuiteConfig;
  /** the callback URL the suite sends the browser back to */
  redirectUrl: string;
  /** null: the suite is off (SUITE_ISSUER unset) */
  provider: SuiteProvider | null;
}

export const suiteOf = (p: Pick<Platform, "state">): SuiteState => p.state<SuiteState>("suite");

/** The provider, or 503 suite_not_configured: for the routes of a platform without a suite. */
export function requireSuite(s: SuiteState): SuiteProvider & { issuer: string } {
  if (!s.provider || !s.config.issuer)
    throw new ApiError(
      "suite_not_configured",
      "This platform has no suite configured; the operator sets SUITE_ISSUER, SUITE_CLIENT_ID and SUITE_CLIENT_SECRET.",
    );
  return Object.assign(s.provider, { issuer: s.config.issuer });
}
