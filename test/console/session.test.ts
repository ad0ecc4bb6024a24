import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { call, createTestApp, expectError, signup, type TestApp } from "../helpers/app.js";

/**
 * The console's server side: the page with its strict CSP, the HttpOnly cookie session, and the CSRF rule that
 * lets the cookie stand in for the bearer token only on requests that repeat the CSRF cookie in a header.
 */

const cookiesOf = (res: { headers: Record<string, unknown> }) => {
  const raw = res.headers["set-cookie"];
  return (Array.isArray(raw) ? raw : raw ? [raw] : []) as string[];
};
const valueOf = (cookies: string[], name: string) =>
  cookies
    .find((c) => c.startsWith(`${name}=`))
    ?.split(";")[0]
    .slice(name.length + 1) ?? "";

describe("console: page, cookie session and CSRF", () => {
  let t: TestApp;
  const csrf = "csrf-token-for-tests-0123456789";
  before(async () => {
    t = await createTestApp();
  });
  after(async () => {
    await t.close();
  });

  test("/ and client routes answer the page with a strict CSP; assets are hashed and cached; /v1 is untouched", async () => {
    for (const url of ["/", "/databases", "/databases/abc", "/billing"]) {
      const res = await call(t.app, { url });
      assert.equal(res.statusCode, 200, url);
      assert.match(String(res.headers["content-type"]), /text\/html/);
      const csp = String(res.headers["content-security-policy"]);
      assert.match(csp, /default-src 'none'/);
      assert.match(csp, /script-src 'self'(;|$)/);
      assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
      assert.match(csp, /frame-ancestors 'none'/);
      assert.equal(res.headers["x-content-type-options"], "nosniff");
    }
    const page = await call(t.app, { url: "/" });
    assert.match(valueOf(cookiesOf(page), "platform_csrf"), /^[\w-]{16,}$/, "a visitor gets a CSRF cookie");
    const asset = /src="\/assets\/([^"]+\.js)"/.exec(page.body)![1];
    const js = await call(t.app, { url: `/assets/${asset}` });
    assert.equal(js.statusCode, 200);
    assert.match(String(js.headers["cache-control"]), /immutable/);
    assert.equal((await call(t.app, { url: "/assets/nope.js" })).statusCode, 404);
    expectError(await call(t.app, { url: "/v1/nothing-here" }), 404);
    const doc = (await call(t.app, { url: "/v1/openapi.json" })).json();
    assert.ok(!Object.keys(doc.paths).some((p) => !p.startsWith("/v1/")), "console routes are not API operations");
  });

  test("sign-in sets an HttpOnly SameSite=Strict session cookie, and needs the CSRF header", async () => {
    const user = await signup(t.app);
    const body = { email: user.email, password: "correct horse battery" };
    const noCsrf = await call(t.app, { method: "POST", url: "/console/session", body });
    expectError(noCsrf, 400, "invalid_request");
    const headers = { cookie: `platform_csrf=${csrf}`, "x-platform-csrf": csrf };
    expectError(
      await call(t.app, {
        method: "POST",
        url: "/console/session",
        body: { ...body, password: "wrong password" },
        headers,
      }),
      401,
      "invalid_credentials",
    );
    const res = await call(t.app, { method: "POST", url: "/console/session", body, headers });
    assert.equal(res.statusCode, 204);
    const cookies = cookiesOf(res);
    const session = cookies.find((c) => c.startsWith("platform_session="))!;
    assert.match(session, /HttpOnly/);
    assert.match(session, /SameSite=Strict/);
    assert.doesNotMatch(session, /Secure/, "plain http: no Secure flag");
    assert.doesNotMatch(
      cookies.find((c) => c.startsWith("platform_csrf="))!,
      /HttpOnly/,
      "the page reads the CSRF cookie",
    );
    assert.equal(res.body, "", "no token in the body");
  });

  test("the session cookie authenticates reads; writes only with the matching CSRF header", async () => {
    const user = await signup(t.app);
    const headers = { cookie: `platform_csrf=${csrf}`, "x-platform-csrf": csrf };
    const login = await call(t.app, {
      method: "POST",
      url: "/console/session",
      body: { email: user.email, password: "correct horse battery" },
      headers,
    });
    const cookies = cookiesOf(login);
    const token = valueOf(cookies, "platform_session");
    const fresh = valueOf(cookies, "platform_csrf");
    const jar = `platform_session=${token}; platform_csrf=${fresh}`;
    const me = await call(t.app, { url: "/v1/me", headers: { cookie: jar } });
    assert.equal(me.statusCode, 200);
    assert.equal(me.json().email, user.email);

    const patch = (h: Record<string, string>) =>
      call(t.app, { method: "PATCH", url: "/v1/me", body: { display_name: "Cookie" }, headers: h });
    const refused = await patch({ cookie: jar });
    expectError(refused, 401, "auth_required");
    assert.match(refused.json().error.message, /X-Platform-CSRF/);
    expectError(await patch({ cookie: jar, "x-platform-csrf": "not-the-cookie-value-000" }), 401, "auth_required");
    expectError(await patch({ cookie: `platform_session=${token}`, "x-platform-csrf": fresh }), 401, "auth_required");
    assert.equal((await patch({ cookie: jar, "x-platform-csrf": fresh })).statusCode, 200);

    // a bearer header wins over the cookie; the cookie never reaches operator routes
    expectError(await call(t.app, { url: "/v1/me", headers: { cookie: jar, authorization: "Bearer op_u_nope" } }), 401);
    expectError(await call(t.app, { url: "/v1/operator/hosts", headers: { cookie: jar } }), 401);

    // signing out: the token is revoked through the API, the cookies are cleared
    const out = await call(t.app, {
      method: "POST",
      url: "/v1/auth/logout",
      headers: { cookie: jar, "x-platform-csrf": fresh },
    });
    assert.equal(out.statusCode, 204);
    const expired = await call(t.app, { url: "/v1/me", headers: { cookie: jar } });
    expectError(expired, 401, "auth_required");
    assert.match(expired.json().error.message, /sign in again/);
    const cleared = await call(t.app, {
      method: "POST",
      url: "/console/signout",
      headers: { cookie: jar, "x-platform-csrf": fresh },
    });
    assert.equal(cleared.statusCode, 204);
    assert.match(
      cookiesOf(cleared).find((c) => c.startsWith("platform_session="))!,
      /Max-Age=0/,
    );
  });

  test("console sign-up creates the account and signs it in", async () => {
    const headers = { cookie: `platform_csrf=${csrf}`, "x-platform-csrf": csrf };
    const email = `console-${Date.now()}@example.com`;
    const short = await call(t.app, {
      method: "POST",
      url: "/console/signup",
      body: { email, password: "short" },
      headers,
    });
    expectError(short, 400, "invalid_request");
    const res = await call(t.app, {
      method: "POST",
      url: "/console/signup",
      body: { email, password: "a long password" },
      headers,
    });
    assert.equal(res.statusCode, 204);
    const jar = `platform_session=${valueOf(cookiesOf(res), "platform_session")}`;
    assert.equal((await call(t.app, { url: "/v1/me", headers: { cookie: jar } })).json().email, email);
  });
});
