import assert from "node:assert/strict";
import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { createTestApp, type TestApp } from "../helpers/app.js";
import { startFakeSuite } from "../fakes/suite.js";
import { CookieJar, startSuiteIdp, type SuiteIdp, type SuitePerson } from "../fakes/suite-idp.js";

export const CLIENT = { client_id: "platform-test", client_secret: "platform-test-secret" };

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

export interface SuiteTestApp extends TestApp {
  baseUrl: string;
  redirectUrl: string;
  idp: SuiteIdp;
  suite: Awaited<ReturnType<typeof startFakeSuite>>;
}

/**
 * The platform on a real port (the suite sends the browser back to its callback) with the suite configured: the
 * fake identity provider (oidc-provider) and the fake directory/metering API.
 */
export async function suiteApp(env: Record<string, string> = {}): Promise<SuiteTestApp> {
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const redirectUrl = `${baseUrl}/v1/auth/suite/callback`;
  const idp = await startSuiteIdp({ clients: [{ ...CLIENT, redirect_uris: [redirectUrl] }] });
  const suite = await startFakeSuite();
  const t = await createTestApp({
    env: {
      SUITE_ISSUER: idp.issuer,
      SUITE_CLIENT_ID: CLIENT.client_id,
      SUITE_CLIENT_SECRET: CLIENT.client_secret,
      SUITE_REDIRECT_URL: redirectUrl,
      SUITE_API_URL: suite.url,
      SUITE_API_TOKEN: suite.token,
      SUITE_API_RPS: "1000",
      PUBLIC_URL: baseUrl,
      ...env,
    },
  });
  await t.app.listen({ port, host: "127.0.0.1" });
  return {
    ...t,
    baseUrl,
    redirectUrl,
    idp,
    suite,
    close: async () => {
      await t.close();
      await idp.close();
      await suite.close();
    },
  };
}

let n = 0;
/** A person of the fake suite (company "acme" unless given). */
export function person(s: SuiteTestApp, p: Partial<SuitePerson> = {}): SuitePerson {
  const i = ++n;
  return s.idp.add({
    sub: `u-${process.pid}-${i}`,
    email: `staff${i}-${process.pid}@acme.example`,
    name: `Staff ${i}`,
    company_id: "acme",
    enterprise_admin: false,
    company_name: "Acme Corp",
    ...p,
  });
}

/**
 * Follows a browser's redirects with a cookie jar from GET /v1/auth/suite/start through the suite's authorization
 * and interaction to the platform's callback URL, which it returns without calling it.
 */
export async function toCallback(s: SuiteTestApp, sub: string, returnTo?: string): Promise<string> {
  return follow(
    s,
    sub,
    `${s.baseUrl}/v1/auth/suite/start${returnTo ? `?return_to=${encodeURIComponent(returnTo)}` : ""}`,
  );
}

/** The same from a start address given whole (the one the CLI prints). */
export async function follow(s: SuiteTestApp, sub: string, start: string): Promise<string> {
  return (await followInBrowser(s, sub, start)).url;
}

/** follow, also giving the browser's cookies (the platform's sign-in binding among them). */
export async function followInBrowser(
  s: SuiteTestApp,
  sub: string,
  start: string,
): Promise<{ url: string; jar: CookieJar }> {
  s.idp.loginAs = sub;
  const jar = new CookieJar();
  let url = start;
  for (let hop = 0; hop < 12; hop++) {
    const res = await fetch(url, { redirect: "manual", headers: { cookie: jar.header() } });
    jar.take(res);
    await res.body?.cancel();
    const location = res.headers.get("location");
    assert.ok(res.status >= 300 && res.status < 400 && location, `${url}: ${res.status}`);
    url = new URL(location, url).href;
    if (url.startsWith(s.redirectUrl)) return { url, jar };
  }
  throw new Error("the sign-in did not come back to the platform");
}

/** A whole sign-in as JSON: the callback's answer (status and body). */
export async function signInJson(s: SuiteTestApp, sub: string, returnTo?: string) {
  const callback = await toCallback(s, sub, returnTo);
  const res = await fetch(callback, { headers: { accept: "application/json" } });
  return { status: res.status, body: (await res.json()) as any, callback };
}

/** A sign-in that must succeed, exchanged for its session. */
export async function signedIn(s: SuiteTestApp, sub: string) {
  const r = await signInJson(s, sub);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  const ex = await fetch(`${s.baseUrl}/v1/auth/suite/exchange`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ code: r.body.code }),
  });
  assert.equal(ex.status, 200);
  return (await ex.json()) as {
    token: string;
    account: { id: string; email: string };
    org_id: string;
    setup_pending: boolean;
    role: string | null;
  };
}
