import type { SuiteConfig } from "../config.js";
import type { SuiteIdentity } from "../provider.js";

/** OpenID Connect through openid-client (sign-in part: to be built). */
export function oidcIdentity(config: SuiteConfig & { issuer: string; redirectUrl: string }): SuiteIdentity {
  const todo = () => Promise.reject(new Error("suite identity: not built yet"));
  return { issuer: config.issuer, begin: todo, finish: todo, refresh: todo };
}
