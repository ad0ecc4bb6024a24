import type { SuiteConfig } from "../config.js";
import type { SuiteProvider } from "../provider.js";
import { suiteApiClient } from "./api-client.js";
import { oidcIdentity } from "./identity.js";
import { worksDirectory } from "./directory.js";
import { meteringBilling } from "./billing.js";

/**
 * The one suite adapter (README.md here, "The suite's API shape"): OpenID Connect through openid-client, a NAVER
 * WORKS-style directory and a marketplace-style metering API, both under SUITE_API_URL (default: the issuer's origin).
 */
export function suiteAdapter(config: SuiteConfig & { issuer: string; redirectUrl: string }): SuiteProvider {
  const api = suiteApiClient({
    baseUrl: config.apiUrl ?? new URL(config.issuer).origin,
    token: config.apiToken,
    rps: config.apiRps,
  });
  return {
    identity: oidcIdentity(config),
    directory: worksDirectory(api),
    billing: meteringBilling(api, config.billingCategory),
  };
}
