import { createPrivateKey, randomBytes, sign, type KeyObject } from "node:crypto";

/**
 * Registry bearer tokens (the Docker token protocol, as CNCF distribution 2.8 checks them): an RS256
 * JWT whose `x5c` header holds the signing certificate (base64 DER), verified against the registry's
 * `auth.token.rootcertbundle`; claims iss (the configured issuer), aud (the service), exp/nbf/iat,
 * jti, sub and `access`: the granted [{type, name, actions}]. A token with an empty access list is
 * valid and lets the client learn nothing; distribution then answers 401 insufficient_scope.
 */

export const TOKEN_ISSUER = "platform-registry-token-issuer";
export const TOKEN_SERVICE = "platform-registry";

export interface Access {
  type: string;
  name: string;
  actions: string[];
}

export interface SignedToken {
  token: string;
  access_token: string;
  expires_in: number;
  issued_at: string;
}

const b64url = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");

export class TokenSigner {
  private readonly key: KeyObject;

  constructor(
    privateKeyPem: string,
    /** base64 DER of the certificate the registry trusts */
    private readonly certificate: string,
  ) {
    this.key = createPrivateKey(privateKeyPem);
  }

  sign(subject: string, access: Access[], ttlSeconds: number, now = new Date()): SignedToken {
    const iat = Math.floor(now.getTime() / 1000);
    const header = { typ: "JWT", alg: "RS256", x5c: [this.certificate] };
    const claims = {
      iss: TOKEN_ISSUER,
      sub: subject,
      aud: TOKEN_SERVICE,
      exp: iat + ttlSeconds,
      nbf: iat - 1,
      iat,
      jti: randomBytes(16).toString("base64url"),
      access,
    };
    const input = `${b64url(header)}.${b64url(claims)}`;
    const token = `${input}.${sign("sha256", Buffer.from(input), this.key).toString("base64url")}`;
    return { token, access_token: token, expires_in: ttlSeconds, issued_at: now.toISOString() };
  }
}

/** One requested scope: `repository:<name>:pull,push` (the name may carry a `:` only in a tag-less form). */
export interface ScopeRequest {
  type: string;
  name: string;
  actions: string[];
}

/**
 * Parses the `scope` query values (each may hold several space-separated scopes). The resource name
 * is everything between the type and the last colon, as distribution's clients write it.
 */
export function parseScopes(values: string[]): ScopeRequest[] {
  const out: ScopeRequest[] = [];
  for (const value of values) {
    for (const text of value.split(" ").filter(Boolean)) {
      const first = text.indexOf(":");
      const last = text.lastIndexOf(":");
      if (first <= 0 || last <= first) continue;
      const actions = text
        .slice(last + 1)
        .split(",")
        .filter(Boolean);
      out.push({ type: text.slice(0, first), name: text.slice(first + 1, last), actions });
    }
  }
  return out;
}

/** What one set of credentials may do: actions on repositories under a namespace (or only the listed ones). */
export interface Allowance {
  namespace: string;
  /** full repository names; null: every repository under the namespace */
  repositories: string[] | null;
  actions: string[];
}

/** Whether a repository name lies in the namespace: `<namespace>/<at least one more component>`. */
export const inNamespace = (name: string, namespace: string): boolean =>
  name.startsWith(namespace + "/") && name.length > namespace.length + 1;

/**
 * The access a token gets: for each requested repository inside the allowance, the requested actions
 * the allowance holds; anything else (other namespaces, catalog, unknown types) is left out, so the
 * registry refuses it.
 */
export function grant(requests: ScopeRequest[], allowance: Allowance): Access[] {
  const out: Access[] = [];
  for (const r of requests) {
    if (r.type !== "repository" || !inNamespace(r.name, allowance.namespace)) continue;
    if (allowance.repositories && !allowance.repositories.includes(r.name)) continue;
    const wanted = r.actions.includes("*") ? ["pull", "push"] : r.actions;
    const actions = [...new Set(wanted.filter((a) => allowance.actions.includes(a)))];
    if (actions.length) out.push({ type: "repository", name: r.name, actions });
  }
  return out;
}

/** The `user:password` of an HTTP Basic Authorization header, or null. */
export function basicCredentials(header: string | undefined): { username: string; password: string } | null {
  const m = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header ?? "");
  if (!m) return null;
  const text = Buffer.from(m[1], "base64").toString("utf8");
  const colon = text.indexOf(":");
  if (colon < 0) return null;
  return { username: text.slice(0, colon), password: text.slice(colon + 1) };
}
