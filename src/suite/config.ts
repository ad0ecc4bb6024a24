import { ConfigError, httpUrl, int } from "../config/config.js";

/**
 * The suite's settings (README.md here). With SUITE_ISSUER unset the suite is off: its sign-in and /v1/org/suite
 * routes answer 503 suite_not_configured, and nothing calls out.
 */
export interface SuiteConfig {
  /** SUITE_ISSUER: the suite's OpenID Connect issuer (discovery at /.well-known/openid-configuration); null: off */
  issuer: string | null;
  /** SUITE_CLIENT_ID, SUITE_CLIENT_SECRET: this platform's client at the suite */
  clientId: string;
  clientSecret: string;
  /** SUITE_REDIRECT_URL: the callback the suite sends the browser back to (default PUBLIC_URL + /v1/auth/suite/callback) */
  redirectUrl: string | null;
  /** SUITE_SCOPES: asked at sign-in (offline_access: a refresh token, so metering can act for the member) */
  scopes: string;
  /** SUITE_COMPANY_CLAIM ("company_id"): the ID-token claim naming the member's suite company */
  companyClaim: string;
  /** SUITE_ADMIN_CLAIM ("enterprise_admin"): the claim that is true for the company's suite enterprise admins */
  adminClaim: string;
  /** SUITE_API_URL: base of the suite's directory and metering APIs; null: the issuer's origin */
  apiUrl: string | null;
  /** SUITE_API_TOKEN: the platform's service credential for the directory and metering APIs */
  apiToken: string;
  /** SUITE_API_RPS (1): calls per second the platform makes to the suite's APIs at most (the suite's rate limit) */
  apiRps: number;
  /** SUITE_BILLING_CATEGORY ("hosting"): the fixed category usage is reported under (1 unit = 1 KRW) */
  billingCategory: string;
  /** SUITE_SYNC_MINUTES (60): how often the periodic directory sync reconciles every linked organization */
  syncMinutes: number;
}

type Env = Record<string, string | undefined>;

export function suiteConfig(env: Env): SuiteConfig {
  const issuer = httpUrl(env, "SUITE_ISSUER");
  if (issuer && !env.SUITE_CLIENT_ID) throw new ConfigError("SUITE_CLIENT_ID", "is required with SUITE_ISSUER");
  return {
    issuer,
    clientId: env.SUITE_CLIENT_ID ?? "",
    clientSecret: env.SUITE_CLIENT_SECRET ?? "",
    redirectUrl: httpUrl(env, "SUITE_REDIRECT_URL"),
    scopes: env.SUITE_SCOPES || "openid email profile offline_access",
    companyClaim: env.SUITE_COMPANY_CLAIM || "company_id",
    adminClaim: env.SUITE_ADMIN_CLAIM || "enterprise_admin",
    apiUrl: httpUrl(env, "SUITE_API_URL"),
    apiToken: env.SUITE_API_TOKEN ?? "",
    apiRps: int(env, "SUITE_API_RPS", 1, 1, 1000),
    billingCategory: env.SUITE_BILLING_CATEGORY || "hosting",
    syncMinutes: int(env, "SUITE_SYNC_MINUTES", 60, 1, 24 * 60),
  };
}
