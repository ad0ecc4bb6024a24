import * as client from "openid-client";
import { ApiError } from "../../http/errors.js";
import type { SuiteConfig } from "../config.js";
import type { SuiteClaims, SuiteIdentity, SuiteTokens } from "../provider.js";
import { suiteUnavailable } from "./api-client.js";

const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]", "::1"]);

/**
 * OpenID Connect through openid-client v6: discovery of SUITE_ISSUER (plain http only for a loopback issuer, as in
 * tests and a suite on the same host), the authorization code flow with PKCE (S256), state and nonce, the ID token
 * validated by openid-client (signature, issuer, audience, expiry, nonce), and the claims read from it (userinfo
 * when the company or admin claim is absent). The discovered configuration is kept per process; a failed discovery
 * is tried again on the next call, and the suite being down answers 503 suite_unavailable.
 */
export function oidcIdentity(config: SuiteConfig & { issuer: string; redirectUrl: string }): SuiteIdentity {
  const issuerUrl = new URL(config.issuer);
  const insecure = issuerUrl.protocol === "http:" && LOOPBACK.has(issuerUrl.hostname);
  let discovered: Promise<client.Configuration> | null = null;

  function configuration(): Promise<client.Configuration> {
    discovered ??= client
      .discovery(
        issuerUrl,
        config.clientId,
        config.clientSecret ? { client_secret: config.clientSecret } : undefined,
        config.clientSecret ? client.ClientSecretPost(config.clientSecret) : client.None(),
        {
          ...(insecure ? { execute: [client.allowInsecureRequests] } : {}),
          timeout: 10,
        },
      )
      .catch((err) => {
        discovered = null; // the next sign-in discovers again
        throw suiteUnavailable(err);
      });
    return discovered;
  }

  async function begin() {
    const cfg = await configuration();
    const codeVerifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const nonce = client.randomNonce();
    const params: Record<string, string> = {
      redirect_uri: config.redirectUrl,
      scope: config.scopes,
      code_challenge: await client.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: "S256",
      state,
      nonce,
    };
    // OpenID Connect grants offline_access (a refresh token) only with prompt=consent
    if (config.scopes.split(/\s+/).includes("offline_access")) params.prompt = "consent";
    return { url: client.buildAuthorizationUrl(cfg, params).href, state, nonce, codeVerifier };
  }

  const tokensOf = (t: client.TokenEndpointResponse & client.TokenEndpointResponseHelpers): SuiteTokens => {
    const expiresIn = t.expiresIn();
    return {
      accessToken: t.access_token,
      refreshToken: t.refresh_token ?? null,
      expiresAt: expiresIn === undefined ? null : new Date(Date.now() + expiresIn * 1000),
    };
  };

  async function finish(callbackUrl: URL, saved: { state: string; nonce: string; codeVerifier: string }) {
    const cfg = await configuration();
    let tokens: Awaited<ReturnType<typeof client.authorizationCodeGrant>>;
    try {
      tokens = await client.authorizationCodeGrant(cfg, callbackUrl, {
        pkceCodeVerifier: saved.codeVerifier,
        expectedState: saved.state,
        expectedNonce: saved.nonce,
        idTokenExpected: true,
      });
    } catch (err) {
      throw refusedOrUnavailable(err);
    }
    const idToken = tokens.claims();
    if (!idToken) throw signInFailed("the suite returned no ID token");
    let raw: Record<string, unknown> = { ...idToken };
    if (raw[config.companyClaim] === undefined || raw[config.adminClaim] === undefined || raw.email === undefined) {
      try {
        raw = { ...(await client.fetchUserInfo(cfg, tokens.access_token, idToken.sub)), ...raw };
      } catch (err) {
        throw refusedOrUnavailable(err);
      }
    }
    return { claims: claimsOf(raw, config), tokens: tokensOf(tokens) };
  }

  async function refresh(refreshToken: string): Promise<SuiteTokens> {
    const cfg = await configuration();
    try {
      const t = await client.refreshTokenGrant(cfg, refreshToken);
      const out = tokensOf(t);
      // a suite that does not rotate refresh tokens keeps the old one valid
      return { ...out, refreshToken: out.refreshToken ?? refreshToken };
    } catch (err) {
      throw refusedOrUnavailable(err);
    }
  }

  return { issuer: config.issuer, begin, finish, refresh };
}

/** The configured claims, checked: the company is a non-empty string, the admin claim true or "true". */
export function claimsOf(raw: Record<string, unknown>, config: Pick<SuiteConfig, "companyClaim" | "adminClaim">) {
  const company = raw[config.companyClaim];
  if (typeof company !== "string" && typeof company !== "number")
    throw signInFailed(`the suite's token has no ${config.companyClaim} claim`);
  const companyId = String(company).trim();
  if (!companyId || companyId.length > 200) throw signInFailed(`the ${config.companyClaim} claim is not a company id`);
  const admin = raw[config.adminClaim];
  const str = (v: unknown) => (typeof v === "string" && v.trim() ? v.trim() : null);
  const claims: SuiteClaims & { companyName: string | null } = {
    subject: String(raw.sub),
    companyId,
    email: str(raw.email)?.toLowerCase() ?? null,
    name: str(raw.name),
    isAdmin: admin === true || admin === "true",
    companyName: str(raw.company_name),
  };
  return claims;
}

const signInFailed = (why: string) =>
  new ApiError("suite_sign_in_failed", `The suite sign-in could not be finished: ${why}. Start it again.`);

/** What the suite refused (a bad code, a replayed state, a token that does not validate) is the caller's 400; a
 * suite that did not answer is 503. */
function refusedOrUnavailable(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  const e = err as { code?: unknown; message?: string; error?: string };
  if (
    err instanceof client.ResponseBodyError ||
    err instanceof client.AuthorizationResponseError ||
    (typeof e.code === "string" && e.code.startsWith("OAUTH_"))
  )
    return signInFailed(e.error ?? e.message ?? "refused");
  return suiteUnavailable(err);
}
