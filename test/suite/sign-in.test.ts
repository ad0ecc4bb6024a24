/**
 * Sign-in with the suite (issue 27) over HTTP against a real OpenID Connect provider (oidc-provider, the fake suite's
 * identity provider): the first enterprise admin links a new organization (billing_mode suite, setup pending);
 * staff are held until the wizard is finished, then admitted by the join policy (invite, all) or told why not;
 * identities never merge with a password account of the same e-mail; states and codes are single use; org_only;
 * the owner's recovery code; the suite routes for owner, admin, member and outsider.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { call, expectError, signup } from "../helpers/app.js";
import { makeOrg } from "../orgs/lib.js";
import { person, signedIn, signInJson, suiteApp, toCallback, type SuiteTestApp } from "./sign-in-lib.js";
import { followInBrowser } from "./sign-in-lib.js";
import type { SuiteState } from "../../src/suite/state.js";

let s: SuiteTestApp;
before(async () => {
  s = await suiteApp();
});
after(async () => s?.close());

const accountsWithEmail = async (email: string) =>
  (await s.db.query<{ n: number }>("SELECT count(*)::int AS n FROM accounts WHERE email = $1", [email])).rows[0].n;
const ORG = { "x-owner": "org" };

describe("suite sign-in", () => {
  let admin: ReturnType<typeof person>;
  let owner: Awaited<ReturnType<typeof signedIn>>;
  let staff: ReturnType<typeof person>;

  test("GET /v1/auth/suite says it is offered; return_to takes only platform paths and loopback addresses", async () => {
    const info = await call(s.app, { url: "/v1/auth/suite" });
    assert.deepEqual(info.json(), { enabled: true, issuer: s.idp.issuer });
    for (const bad of ["https://evil.example/x", "//evil.example/x", "http://10.0.0.1:80/cb", "http://127.0.0.1/cb"]) {
      const res = await call(s.app, { url: `/v1/auth/suite/start?return_to=${encodeURIComponent(bad)}` });
      expectError(res, 400, "invalid_request");
    }
    for (const good of ["/org", "http://127.0.0.1:4567/callback", "http://localhost:4567/cb"]) {
      const res = await call(s.app, { url: `/v1/auth/suite/start?return_to=${encodeURIComponent(good)}` });
      assert.equal(res.statusCode, 302, res.body);
      const to = new URL(res.headers.location as string);
      assert.equal(to.origin, s.idp.issuer);
      assert.equal(to.searchParams.get("code_challenge_method"), "S256");
      assert.ok(to.searchParams.get("state") && to.searchParams.get("nonce"));
    }
  });

  test("a staff member of an unlinked company gets suite_not_linked and no account", async () => {
    const early = person(s);
    const r = await signInJson(s, early.sub);
    assert.equal(r.status, 403);
    assert.equal(r.body.error.code, "suite_not_linked");
    assert.equal(await accountsWithEmail(early.email), 0);
  });

  test("the first enterprise admin links a new organization: billing_mode suite, setup pending, owner", async () => {
    admin = person(s, { enterprise_admin: true });
    owner = await signedIn(s, admin.sub);
    assert.equal(owner.setup_pending, true);
    assert.equal(owner.role, "owner");
    assert.equal(owner.account.email, admin.email);
    const org = await call(s.app, { url: "/v1/org", token: owner.token });
    assert.equal(org.statusCode, 200, org.body);
    assert.equal(org.json().billing_mode, "suite");
    assert.equal(org.json().name, "Acme Corp");
    const link = await call(s.app, { url: "/v1/org/suite", token: owner.token });
    assert.equal(link.statusCode, 200, link.body);
    assert.equal(link.json().company_id, "acme");
    assert.equal(link.json().setup_done, false);
    assert.equal(link.json().billing_mode, "suite");
    // billed through the suite from the link on: zero balance, suite_billed
    const balance = await call(s.app, {
      url: "/v1/billing/balance",
      token: owner.token,
      headers: { "x-owner": "org" },
    });
    assert.equal(balance.statusCode, 200, balance.body);
    assert.equal(balance.json().suite_billed, true);
    assert.equal(balance.json().balance, 0);
    // the suite's tokens are kept sealed, with their expiry and the login time
    const { rows } = await s.db.query(
      "SELECT access_token_sealed, refresh_token_sealed, token_expires_at, last_login_at FROM suite_identities WHERE account_id = $1",
      [owner.account.id],
    );
    assert.match(rows[0].access_token_sealed, /^enc:v1:/);
    assert.match(rows[0].refresh_token_sealed, /^enc:v1:/);
    assert.ok(rows[0].token_expires_at && rows[0].last_login_at);
    // the refresh token works at the suite (the metering part acts for the member with it)
    const suite = s.platform.state<SuiteState>("suite");
    const refreshed = await suite.provider!.identity.refresh(
      s.platform.secrets.open(rows[0].refresh_token_sealed, "suite_identities.refresh_token_sealed"),
    );
    assert.ok(refreshed.accessToken && refreshed.expiresAt);
    // signing in again finds the same account (identity on issuer, company and subject)
    const again = await signedIn(s, admin.sub);
    assert.equal(again.account.id, owner.account.id);
  });

  test("before the setup is finished staff are held (no account); another enterprise admin joins as admin", async () => {
    staff = person(s);
    const r = await signInJson(s, staff.sub);
    assert.equal(r.status, 403);
    assert.equal(r.body.error.code, "suite_setup_pending");
    assert.equal(await accountsWithEmail(staff.email), 0);
    // without Accept: application/json the browser goes to the console's sign-in page with the notice
    const res = await fetch(await toCallback(s, staff.sub), { redirect: "manual" });
    assert.equal(res.status, 302);
    assert.equal(res.headers.get("location"), "/signin?notice=suite_setup_pending");

    const second = person(s, { enterprise_admin: true });
    const joined = await signedIn(s, second.sub);
    assert.equal(joined.org_id, owner.org_id);
    assert.equal(joined.role, "admin");
  });

  test("the join policy: invite by default; an invited e-mail joins with the invitation's role", async () => {
    const policy = await call(s.app, { url: "/v1/org/suite/join-policy", token: owner.token });
    assert.deepEqual(policy.json(), { policy: "invite", departments: [] });
    const done = await call(s.app, { method: "POST", url: "/v1/org/suite/setup/finish", token: owner.token });
    assert.equal(done.statusCode, 200, done.body);
    assert.equal(done.json().setup_done, true);

    const r = await signInJson(s, staff.sub);
    assert.equal(r.status, 403);
    assert.equal(r.body.error.code, "suite_join_invite");
    assert.equal(await accountsWithEmail(staff.email), 0);

    const inv = await call(s.app, {
      method: "POST",
      url: "/v1/org/invites",
      token: owner.token,
      body: { emails: [staff.email], role: "member" },
    });
    assert.ok(inv.statusCode < 300, inv.body);
    const joined = await signedIn(s, staff.sub);
    assert.equal(joined.role, "member");
    assert.equal(joined.setup_pending, false);
    const { rows } = await s.db.query("SELECT status, accepted_by FROM org_invites WHERE lower(email) = $1", [
      staff.email,
    ]);
    assert.equal(rows[0].status, "accepted");
    assert.equal(rows[0].accepted_by, joined.account.id);
  });

  test("policy all admits any staff member; departments needs the chosen units", async () => {
    const bad = await call(s.app, {
      method: "PUT",
      url: "/v1/org/suite/join-policy",
      token: owner.token,
      body: { policy: "departments" },
    });
    expectError(bad, 400, "invalid_request");
    const set = await call(s.app, {
      method: "PUT",
      url: "/v1/org/suite/join-policy",
      token: owner.token,
      body: { policy: "all" },
    });
    assert.deepEqual(set.json(), { policy: "all", departments: [] });
    const anyone = person(s);
    const joined = await signedIn(s, anyone.sub);
    assert.equal(joined.role, "member");
    assert.equal(joined.org_id, owner.org_id);
    // someone who deleted their account here gets a new one at their next suite sign-in
    const gone = await call(s.app, { method: "POST", url: "/v1/me/delete", token: joined.token });
    assert.equal(gone.statusCode, 204, gone.body);
    const fresh = await signedIn(s, anyone.sub);
    assert.notEqual(fresh.account.id, joined.account.id);
    assert.equal(fresh.org_id, owner.org_id);
  });

  test("policy departments admits staff of the chosen units and their descendants, else suite_join_department", async () => {
    const chart = s.suite.directory.company("acme");
    chart.units.push(
      { id: "root", name: "Acme" },
      { id: "eng", name: "Engineering", parentId: "root" },
      { id: "eng-web", name: "Web", parentId: "eng" },
      { id: "sales", name: "Sales", parentId: "root" },
    );
    const web = person(s);
    const seller = person(s);
    chart.users.push({ userId: web.sub, email: web.email, units: ["eng-web"] });
    chart.users.push({ userId: seller.sub, email: seller.email, units: ["sales"] });
    const set = await call(s.app, {
      method: "PUT",
      url: "/v1/org/suite/join-policy",
      token: owner.token,
      body: { policy: "departments", departments: ["eng"] },
    });
    assert.deepEqual(set.json(), { policy: "departments", departments: ["eng"] });

    const out = await signInJson(s, seller.sub);
    assert.equal(out.status, 403);
    assert.equal(out.body.error.code, "suite_join_department");
    assert.equal(await accountsWithEmail(seller.email), 0);
    const joined = await signedIn(s, web.sub);
    assert.equal(joined.role, "member");
    assert.equal(joined.org_id, owner.org_id);

    await call(s.app, { method: "PUT", url: "/v1/org/suite/join-policy", token: owner.token, body: { policy: "all" } });
  });

  test("a suite identity never merges with a password account of the same e-mail", async () => {
    const shared = `shared-${process.pid}@acme.example`;
    const pw = await signup(s.app, shared);
    const twin = person(s, { email: shared });
    const suiteSide = await signedIn(s, twin.sub);
    assert.notEqual(suiteSide.account.id, pw.id);
    assert.equal(await accountsWithEmail(shared), 2);
    const login = await call(s.app, {
      method: "POST",
      url: "/v1/auth/login",
      body: { email: shared, password: "correct horse battery" },
    });
    assert.equal(login.statusCode, 200, login.body);
    const me = await call(s.app, { url: "/v1/me", token: login.json().token });
    assert.equal(me.json().id, pw.id);
    const meSuite = await call(s.app, { url: "/v1/me", token: suiteSide.token });
    assert.equal(meSuite.json().id, suiteSide.account.id);
    const again = await call(s.app, {
      method: "POST",
      url: "/v1/auth/signup",
      body: { email: shared, password: "correct horse battery" },
    });
    expectError(again, 409, "email_taken");
  });

  test("states and login codes are single use; an unknown state is refused", async () => {
    const unknown = await fetch(`${s.redirectUrl}?code=x&state=nope`, { headers: { accept: "application/json" } });
    assert.equal(unknown.status, 400);
    assert.equal(((await unknown.json()) as any).error.code, "suite_sign_in_failed");

    const r = await signInJson(s, admin.sub);
    assert.equal(r.status, 200);
    const replay = await fetch(r.callback, { headers: { accept: "application/json" } });
    assert.equal(replay.status, 400);
    assert.equal(((await replay.json()) as any).error.code, "suite_sign_in_failed");

    const first = await call(s.app, { method: "POST", url: "/v1/auth/suite/exchange", body: { code: r.body.code } });
    assert.equal(first.statusCode, 200, first.body);
    const second = await call(s.app, { method: "POST", url: "/v1/auth/suite/exchange", body: { code: r.body.code } });
    expectError(second, 400, "suite_sign_in_failed");
    // a browser (no JSON) goes to return_to with the code, never with a session
    const cb = await toCallback(s, admin.sub, "/org");
    const res = await fetch(cb, { redirect: "manual" });
    assert.equal(res.status, 302);
    assert.match(res.headers.get("location")!, /^\/org\?suite_code=[\w-]+$/);
  });

  test("login CSRF: the console's exchange takes a code only in the browser that started the sign-in", async () => {
    const csrf = "c".repeat(24);
    const consoleExchange = (code: string, cookies: string) =>
      fetch(`${s.baseUrl}/console/suite-session`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "x-platform-csrf": csrf,
          cookie: `platform_csrf=${csrf}; ${cookies}`,
        },
        body: JSON.stringify({ code }),
      });
    // an attacker's own sign-in, its code handed to a victim's browser (no binding cookie, or the victim's own)
    const theirs = await followInBrowser(s, admin.sub, `${s.baseUrl}/v1/auth/suite/start`);
    const victim = await followInBrowser(s, staff.sub, `${s.baseUrl}/v1/auth/suite/start`);
    const theirCode = ((await (await fetch(theirs.url, { headers: { accept: "application/json" } })).json()) as any)
      .code;
    for (const cookies of ["", victim.jar.header()]) {
      const refused = await consoleExchange(theirCode, cookies);
      assert.equal(refused.status, 400);
      assert.equal(((await refused.json()) as any).error.code, "suite_sign_in_failed");
    }
    // in the browser that started it the same code signs in (the refusals did not use it up)
    const ok = await consoleExchange(theirCode, theirs.jar.header());
    assert.equal(ok.status, 200, await ok.clone().text());
    assert.match(ok.headers.getSetCookie().join(";"), /platform_session=op_/);
  });

  test("org_only: a suite account creates nothing personal; with X-Owner: org it creates company assets", async () => {
    const member = await signedIn(s, staff.sub);
    // company assets are billed to the member's suite allowance (the billing part)
    s.suite.billing.setAllowance("acme", staff.sub, { limit: 100_000 });
    const personal = await call(s.app, {
      method: "POST",
      url: "/v1/buckets",
      token: member.token,
      body: { name: `pers-${process.pid}` },
    });
    expectError(personal, 403, "org_only");
    const company = await call(s.app, {
      method: "POST",
      url: "/v1/buckets",
      token: member.token,
      headers: ORG,
      body: { name: `comp-${process.pid}` },
    });
    assert.equal(company.statusCode, 201, company.body);
    // password accounts are not touched by the rule
    const pw = await signup(s.app);
    const mine = await call(s.app, {
      method: "POST",
      url: "/v1/buckets",
      token: pw.token,
      body: { name: `pw-${process.pid}` },
    });
    assert.equal(mine.statusCode, 201, mine.body);
  });

  test("a deprovisioned member comes back only if the policy admits them now, never by an old invitation", async () => {
    const leaver = person(s);
    const first = await signedIn(s, leaver.sub); // policy all
    await call(s.app, {
      method: "PUT",
      url: "/v1/org/suite/join-policy",
      token: owner.token,
      body: { policy: "invite" },
    });
    // what the directory part does when the suite stops listing someone: out of the organization, marked
    await s.db.query("DELETE FROM org_members WHERE account_id = $1", [first.account.id]);
    const old = await call(s.app, {
      method: "POST",
      url: "/v1/org/invites",
      token: owner.token,
      body: { emails: [leaver.email] },
    });
    assert.ok(old.statusCode < 300, old.body);
    await s.db.query("UPDATE suite_identities SET deprovisioned_at = now() WHERE account_id = $1", [first.account.id]);

    const refused = await signInJson(s, leaver.sub);
    assert.equal(refused.status, 403);
    assert.equal(refused.body.error.code, "suite_join_invite");
    const { rows } = await s.db.query("SELECT status FROM org_invites WHERE lower(email) = $1", [leaver.email]);
    assert.deepEqual(
      rows.map((r) => r.status),
      ["withdrawn"],
    );
    // a new invitation brings them back, to the same account
    await call(s.app, { method: "POST", url: "/v1/org/invites", token: owner.token, body: { emails: [leaver.email] } });
    const back = await signedIn(s, leaver.sub);
    assert.equal(back.account.id, first.account.id);
    assert.equal(back.org_id, owner.org_id);
    const ident = await s.db.query("SELECT deprovisioned_at FROM suite_identities WHERE account_id = $1", [
      first.account.id,
    ]);
    assert.equal(ident.rows[0].deprovisioned_at, null);
  });

  test("the owner's recovery code: owner only, shown once, single use, a new one replaces the old", async () => {
    const adminSide = await signedIn(s, admin.sub); // the owner
    const code1 = await call(s.app, { method: "POST", url: "/v1/org/suite/recovery-code", token: adminSide.token });
    assert.equal(code1.statusCode, 200, code1.body);
    const code2 = await call(s.app, { method: "POST", url: "/v1/org/suite/recovery-code", token: adminSide.token });
    const old = await call(s.app, {
      method: "POST",
      url: "/v1/auth/suite/recover",
      body: { email: admin.email, code: code1.json().recovery_code },
    });
    expectError(old, 401, "invalid_credentials");
    const ok = await call(s.app, {
      method: "POST",
      url: "/v1/auth/suite/recover",
      body: { email: admin.email.toUpperCase(), code: code2.json().recovery_code },
    });
    assert.equal(ok.statusCode, 200, ok.body);
    assert.equal(ok.json().account.id, owner.account.id);
    const me = await call(s.app, { url: "/v1/me", token: ok.json().token });
    assert.equal(me.json().id, owner.account.id);
    const reused = await call(s.app, {
      method: "POST",
      url: "/v1/auth/suite/recover",
      body: { email: admin.email, code: code2.json().recovery_code },
    });
    expectError(reused, 401, "invalid_credentials");
  });

  test("the suite routes for owner, admin, member and outsider; 404 outside a suite-linked organization", async () => {
    const member = await signedIn(s, staff.sub);
    const adminSeat = await signedIn(s, person(s, { enterprise_admin: true }).sub);
    const outsider = await signup(s.app);
    for (const [method, url] of [
      ["GET", "/v1/org/suite"],
      ["GET", "/v1/org/suite/join-policy"],
      ["POST", "/v1/org/suite/setup/finish"],
    ] as const) {
      assert.equal((await call(s.app, { method, url, token: owner.token })).statusCode, 200, url);
      assert.equal((await call(s.app, { method, url, token: adminSeat.token })).statusCode, 200, url);
      expectError(await call(s.app, { method, url, token: member.token }), 403, "forbidden_role");
      expectError(await call(s.app, { method, url, token: outsider.token }), 404, "not_found");
    }
    expectError(
      await call(s.app, { method: "POST", url: "/v1/org/suite/recovery-code", token: adminSeat.token }),
      403,
      "forbidden_role",
    );
    const plain = await makeOrg(s, { admins: 0, members: 0 });
    const res = await call(s.app, { url: "/v1/org/suite", token: plain.owner.token });
    expectError(res, 404, "not_found");
    assert.match(res.json().error.message, /not linked to a suite/);
  });
});
