import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { generateKeyPairSync, randomBytes } from "node:crypto";
import Provider, { type Configuration } from "oidc-provider";

/** oidc-provider's storage, in this process's memory (a test's provider lives as long as the test). */
class MemoryAdapter {
  private static readonly store = new Map<string, { payload: Record<string, unknown>; expiresAt: number }>();
  constructor(private readonly model: string) {}
  private key = (id: string) => `${this.model}:${id}`;
  async upsert(id: string, payload: Record<string, unknown>, expiresIn: number) {
    MemoryAdapter.store.set(this.key(id), { payload, expiresAt: Date.now() + expiresIn * 1000 });
  }
  async find(id: string) {
    const hit = MemoryAdapter.store.get(this.key(id));
    if (!hit || hit.expiresAt < Date.now()) return undefined;
    return hit.payload as never;
  }
  async findByUserCode(userCode: string) {
    return this.findWhere((p) => p.userCode === userCode);
  }
  async findByUid(uid: string) {
    return this.findWhere((p) => p.uid === uid);
  }
  private findWhere(match: (p: Record<string, unknown>) => boolean) {
    for (const [k, v] of MemoryAdapter.store)
      if (k.startsWith(`${this.model}:`) && v.expiresAt >= Date.now() && match(v.payload)) return v.payload as never;
    return undefined;
  }
  async consume(id: string) {
    const hit = MemoryAdapter.store.get(this.key(id));
    if (hit) hit.payload.consumed = Math.floor(Date.now() / 1000);
  }
  async destroy(id: string) {
    MemoryAdapter.store.delete(this.key(id));
  }
  async revokeByGrantId(grantId: string) {
    for (const [k, v] of MemoryAdapter.store) if (v.payload.grantId === grantId) MemoryAdapter.store.delete(k);
  }
}

/** A person of the fake suite: what its ID tokens say about them. */
export interface SuitePerson {
  sub: string;
  email: string;
  name: string;
  company_id: string;
  enterprise_admin: boolean;
  company_name?: string;
}

export interface SuiteClient {
  client_id: string;
  client_secret: string;
  redirect_uris: string[];
}

/**
 * The suite's identity provider for tests: a real OpenID Connect server (oidc-provider v8) on loopback. People are a
 * mutable map (`people`); `loginAs` names who the next sign-in authenticates as, so a browser or a plain HTTP client
 * with a cookie jar follows redirects only: the interaction page signs that person in and grants the requested
 * scopes at once (an unknown `loginAs` answers access_denied). The company claims ride in the ID token (scope
 * `openid`); PKCE S256 is required; offline_access gives refresh tokens.
 */
export async function startSuiteIdp(opts: { clients: SuiteClient[]; port?: number }) {
  const people = new Map<string, SuitePerson>();
  const state = { loginAs: null as string | null };
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, "127.0.0.1", resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const jwk = { ...privateKey.export({ format: "jwk" }), kid: "suite-test", use: "sig", alg: "RS256" };
  const configuration: Configuration = {
    clients: opts.clients.map((c) => ({
      ...c,
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "client_secret_post",
    })),
    jwks: { keys: [jwk as never] },
    cookies: { keys: [randomBytes(16).toString("hex")] },
    scopes: ["openid", "email", "profile", "offline_access"],
    claims: {
      openid: ["sub", "company_id", "enterprise_admin", "company_name"],
      email: ["email", "email_verified"],
      profile: ["name"],
    },
    // the company and admin claims in the ID token itself, as the platform reads them first
    conformIdTokenClaims: false,
    pkce: { required: () => true, methods: ["S256"] },
    features: { devInteractions: { enabled: false } },
    adapter: MemoryAdapter,
    ttl: { Interaction: 600, Session: 3600, Grant: 3600, AccessToken: 3600, IdToken: 3600, RefreshToken: 86_400 },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    async findAccount(_ctx, sub) {
      const person = people.get(sub);
      if (!person) return undefined;
      return {
        accountId: sub,
        claims: async () => ({ ...person, email_verified: true }),
      };
    },
  };
  const provider = new Provider(issuer, configuration);
  const callback = provider.callback();

  async function interaction(req: IncomingMessage, res: ServerResponse) {
    const details = await provider.interactionDetails(req, res);
    const sub = state.loginAs;
    if (!sub || !people.has(sub)) {
      await provider.interactionFinished(req, res, {
        error: "access_denied",
        error_description: "no such person at the suite",
      });
      return;
    }
    const grant = new provider.Grant({ accountId: sub, clientId: String(details.params.client_id) });
    grant.addOIDCScope(String(details.params.scope));
    const grantId = await grant.save();
    await provider.interactionFinished(req, res, { login: { accountId: sub }, consent: { grantId } });
  }

  server.on("request", (req: IncomingMessage, res: ServerResponse) => {
    if (req.url?.startsWith("/interaction/")) {
      interaction(req, res).catch((err) => {
        res.writeHead(500, { "content-type": "text/plain" });
        res.end(String(err));
      });
      return;
    }
    callback(req, res);
  });

  return {
    issuer,
    people,
    /** who the next sign-in is (a sub of `people`) */
    set loginAs(sub: string | null) {
      state.loginAs = sub;
    },
    get loginAs() {
      return state.loginAs;
    },
    add(person: SuitePerson) {
      people.set(person.sub, person);
      return person;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
export type SuiteIdp = Awaited<ReturnType<typeof startSuiteIdp>>;

/** A cookie jar for a plain HTTP client following the sign-in's redirects (name → value; paths ignored). */
export class CookieJar {
  private readonly cookies = new Map<string, string>();
  take(res: Response) {
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attrs] = line.split(";");
      const eq = pair.indexOf("=");
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      const expired = attrs.some((a) => /^\s*expires=/i.test(a) && Date.parse(a.split("=")[1]) < Date.now());
      if (expired || value === "") this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }
  header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
  }
}
