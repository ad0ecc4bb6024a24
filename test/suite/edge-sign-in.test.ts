/**
 * "Sign in with the suite" at the edge (issue 27, spec "Organizations and suite login" 7): suite staff have no
 * password, so a company site's sign-in page offers the suite; the browser goes through the suite (oidc-provider)
 * and back to the edge's landing on the site's host, which sets the host's session cookie: the site answers 200.
 * A code from another sign-in (no or another binding cookie) is refused; a return_to on a host the edge does not
 * serve is refused 400. Real edge, real HTTP.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { call } from "../helpers/app.js";
import { edgeArea } from "../../src/edge/module.js";
import type { Edge } from "../../src/edge/module.js";
import { APPS_DOMAIN, get, type Answer } from "../static/lib.js";
import { companySite } from "../orgs/site-lib.js";
import { followInBrowser, person, signedIn, suiteApp, type SuiteTestApp } from "./sign-in-lib.js";

let s: SuiteTestApp;
let port: number;
let owner: Awaited<ReturnType<typeof signedIn>>;
const SLUG = "suite-edge-site";
const HOST = `${SLUG}.${APPS_DOMAIN}`;

const cookieOf = (res: Answer, name: string): string | null => {
  const line = (res.headers["set-cookie"] ?? []).find((c) => c.startsWith(`${name}=`));
  return line ? line.slice(name.length + 1).split(";")[0] : null;
};

/** An edge request for the site's host; `url` may be absolute (the suite's redirect back to the landing). */
const edge = (url: string, cookie?: string) => {
  const u = new URL(url, `http://${HOST}`);
  assert.equal(u.host, HOST);
  return get(port, SLUG, `${u.pathname}${u.search}`, { headers: cookie ? { cookie } : {} });
};

/** From the sign-in link through the suite: the binding cookie and the address the callback sends the browser to. */
async function throughSuite(sub: string, next = "/page.html") {
  const link = await edge(`/.platform/suite-sign-in?next=${encodeURIComponent(next)}`);
  assert.equal(link.status, 302, link.text);
  const binding = cookieOf(link, "platform_suite_binding");
  assert.ok(binding);
  assert.match(String(link.headers["set-cookie"]), /HttpOnly; SameSite=Lax; Max-Age=600/);
  // straight to the suite's authorization page, with a sign-in begun in-process (the binding's hash in no URL)
  const start = new URL(String(link.headers.location));
  assert.ok(start.href.startsWith(s.idp.issuer), start.href);
  assert.ok(!start.href.includes(binding));
  const { url: callback } = await followInBrowser(s, sub, start.href);
  const back = await fetch(callback, { redirect: "manual" });
  assert.equal(back.status, 302);
  return { binding, landing: back.headers.get("location")! };
}

before(async () => {
  s = await suiteApp({ APPS_DOMAIN });
  await edgeArea.start!(s.platform, s.platform.state<Edge>("edge"));
  port = s.platform.state<Edge>("edge").port!;
  const admin = person(s, { enterprise_admin: true });
  owner = await signedIn(s, admin.sub);
  // the site is billed to the admin's suite account: the fake metering API lists it with an allowance
  s.suite.billing.setAllowance("acme", admin.sub, {
    limit: 100_000,
    used: 0,
    resetsAt: "2030-01-01T00:00:00.000Z",
    contact: "it-help@acme.example",
  });
  const policy = {
    method: "PUT" as const,
    url: "/v1/org/suite/join-policy",
    token: owner.token,
    body: { policy: "all" },
  };
  assert.equal((await call(s.app, policy)).statusCode, 200);
  const done = await call(s.app, { method: "POST", url: "/v1/org/suite/setup/finish", token: owner.token });
  assert.equal(done.statusCode, 200, done.body);
  await companySite(s, { token: owner.token, id: owner.account.id, email: owner.account.email }, SLUG);
});
after(async () => s?.close());

describe("sign in with the suite at the edge", () => {
  test("a staff member opens a company site, signs in through the suite and sees it", async () => {
    const page = await edge("/page.html");
    assert.equal(page.status, 401);
    assert.match(page.text, /href="\/.platform\/suite-sign-in\?next=%2Fpage.html">Sign in with the suite</);

    const staff = person(s);
    const { binding, landing } = await throughSuite(staff.sub);
    const landed = await edge(landing, `platform_suite_binding=${binding}`);
    assert.equal(landed.status, 303, landed.text);
    assert.equal(landed.headers.location, "/page.html");
    const session = cookieOf(landed, "platform_session");
    assert.ok(session);
    assert.equal(cookieOf(landed, "platform_suite_binding"), "");
    const seen = await edge("/page.html", `platform_session=${session}`);
    assert.equal(seen.status, 200);
    assert.equal(seen.text, `${SLUG} page`);
  });

  test("a code from another sign-in is refused: no binding cookie, or another browser's", async () => {
    const staff = person(s);
    const { binding, landing } = await throughSuite(staff.sub);
    const none = await edge(landing);
    assert.equal(none.status, 401);
    assert.match(none.text, /did not start this sign-in/);
    assert.equal(cookieOf(none, "platform_session"), null);
    // the victim's browser has a binding of its own sign-in, but the code is someone else's
    const victim = await edge("/.platform/suite-sign-in?next=%2F");
    const other = await edge(landing, `platform_suite_binding=${cookieOf(victim, "platform_suite_binding")}`);
    assert.equal(other.status, 401);
    assert.match(other.text, /could not be finished/);
    assert.match(other.text, /Sign in with the suite/);
    assert.equal(cookieOf(other, "platform_session"), null);
    // the browser that started it still lands (a refused try does not use the code up)
    assert.equal((await edge(landing, `platform_suite_binding=${binding}`)).status, 303);
  });

  test("a person the suite may not admit lands on the sign-in page with the notice in words", async () => {
    const stranger = person(s, { company_id: "globex", company_name: "Globex" });
    const { binding, landing } = await throughSuite(stranger.sub);
    assert.match(landing, /notice=suite_not_linked/);
    const res = await edge(landing, `platform_suite_binding=${binding}`);
    assert.equal(res.status, 401);
    assert.match(res.text, /no organization on this platform yet/);
  });

  test("return_to on a host the edge does not serve is refused 400; a site's host only from its own page", async () => {
    const start = (returnTo: string) =>
      fetch(`${s.baseUrl}/v1/auth/suite/start?return_to=${encodeURIComponent(returnTo)}`, { redirect: "manual" });
    for (const returnTo of [
      `http://nowhere.${APPS_DOMAIN}/.platform/suite-landing?next=%2F`,
      "https://evil.example/.platform/suite-landing",
      `http://${HOST}/elsewhere`,
      // served, but the public route has no binding for it: only the edge starts such a sign-in
      `http://${HOST}/.platform/suite-landing?next=%2F`,
    ]) {
      const res = await start(returnTo);
      assert.equal(res.status, 400, returnTo);
      assert.equal(((await res.json()) as any).error.code, "invalid_request");
    }
    // the edge's capability refuses a host it does not serve too
    const edgeSignIn = s.platform.kernel.require("suiteEdgeSignIn");
    await assert.rejects(
      edgeSignIn.start(`http://nowhere.${APPS_DOMAIN}/.platform/suite-landing`, "a".repeat(64)),
      (err: any) => err.code === "invalid_request",
    );
    assert.match(await edgeSignIn.start(`http://${HOST}/.platform/suite-landing`, "a".repeat(64)), /^http/);
  });
});
