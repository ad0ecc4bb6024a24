import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { call, createTestApp, expectError, OPERATOR_TOKEN, scopedKey, signup } from "../helpers/app.js";
import { makeOrg } from "../orgs/lib.js";
import { acceptTerms, approve, get, post, startOnpremApp, TERMS_VERSION, type OnpremApp } from "./lib.js";

describe("on-premises access and terms", () => {
  let o: OnpremApp;
  before(async () => {
    o = await startOnpremApp();
  });
  after(async () => {
    await o.close();
  });
  const request = (token: string, body: Record<string, unknown>) =>
    post(o.t, "/v1/onprem/access/request", token, { company: "Acme", contact: "ops@acme.example", ...body });

  test("an inquiry is pending, then approved with a note; the status shows each step", async () => {
    const u = await signup(o.t.app);
    const none = await get(o.t, "/v1/onprem/access?scope=me", u.token);
    assert.equal(none.statusCode, 200, none.body);
    assert.equal(none.json().status, "none");
    assert.equal(none.json().pending, null);

    const req = await request(u.token, { scope: "me", message: "20 hosts in our data centre" });
    assert.equal(req.statusCode, 201, req.body);
    const inquiry = req.json();
    assert.equal(inquiry.status, "pending");
    assert.equal(inquiry.scope, "me");
    assert.deepEqual(inquiry.owner, { kind: "account", id: u.id });
    assert.equal(inquiry.requester_email, u.email);
    assert.equal(inquiry.message, "20 hosts in our data centre");

    const pending = (await get(o.t, "/v1/onprem/access", u.token)).json();
    assert.equal(pending.status, "pending");
    assert.equal(pending.pending.id, inquiry.id);
    // one open inquiry at a time
    expectError(await request(u.token, { scope: "me" }), 409, "conflict");

    const listed = await get(o.t, "/v1/operator/onprem/access-requests?status=pending", OPERATOR_TOKEN);
    assert.equal(listed.statusCode, 200, listed.body);
    assert.ok(listed.json().some((r: { id: string }) => r.id === inquiry.id));
    const ok = await post(o.t, `/v1/operator/onprem/access-requests/${inquiry.id}/approve`, OPERATOR_TOKEN, {
      note: "welcome",
    });
    assert.equal(ok.statusCode, 200, ok.body);
    assert.equal(ok.json().status, "approved");
    assert.equal(ok.json().note, "welcome");

    const approved = (await get(o.t, "/v1/onprem/access", u.token)).json();
    assert.equal(approved.status, "approved");
    assert.equal(approved.approval_note, "welcome");
    assert.ok(approved.approved_at);
    assert.equal(approved.pending, null);
    // decided once; approved owners need no new inquiry
    expectError(
      await post(o.t, `/v1/operator/onprem/access-requests/${inquiry.id}/reject`, OPERATOR_TOKEN, { note: "x" }),
      409,
      "conflict",
    );
    expectError(await request(u.token, { scope: "me" }), 409, "conflict");
  });

  test("a rejection's note is shown to the caller, who may ask again", async () => {
    const u = await signup(o.t.app);
    const id = (await request(u.token, {})).json().id;
    expectError(
      await post(o.t, `/v1/operator/onprem/access-requests/${id}/reject`, OPERATOR_TOKEN, {}),
      400,
      "invalid_request",
    );
    const no = await post(o.t, `/v1/operator/onprem/access-requests/${id}/reject`, OPERATOR_TOKEN, {
      note: "Please use a company e-mail address.",
    });
    assert.equal(no.statusCode, 200, no.body);
    const status = (await get(o.t, "/v1/onprem/access?scope=me", u.token)).json();
    assert.equal(status.status, "rejected");
    assert.equal(status.rejection_note, "Please use a company e-mail address.");
    assert.ok(status.rejected_at);
    // rejected: still gated
    expectError(
      await post(o.t, "/v1/onprem/licenses/trial", u.token, { customer: "Acme" }),
      403,
      "onprem_approval_required",
    );

    const again = await request(u.token, { contact: "cto@acme.example" });
    assert.equal(again.statusCode, 201, again.body);
    const now = (await get(o.t, "/v1/onprem/access", u.token)).json();
    assert.equal(now.status, "pending");
    assert.equal(now.rejection_note, "Please use a company e-mail address.", "the last rejection stays visible");
    expectError(
      await post(
        o.t,
        "/v1/operator/onprem/access-requests/7d0c6b2e-8f7e-4a1f-9d3c-2b1a0f9e8d7c/approve",
        OPERATOR_TOKEN,
        {},
      ),
      404,
      "not_found",
    );
  });

  test("scope org: any member reads the status, only an admin or the owner asks; approval covers the organization", async () => {
    const org = await makeOrg(o.t, { admins: 1, members: 1 });
    const member = org.members[0];
    const admin = org.admins[0];
    expectError(await request(member.token, { scope: "org" }), 403, "forbidden_role");
    expectError(await request(org.outsider.token, { scope: "org" }), 404, "not_found");
    expectError(await get(o.t, "/v1/onprem/access?scope=org", org.outsider.token), 404, "not_found");
    assert.equal((await get(o.t, "/v1/onprem/access?scope=org", member.token)).json().status, "none");

    const id = await approve(o.t, admin.token, "org");
    const seen = (await get(o.t, "/v1/onprem/access?scope=org", member.token)).json();
    assert.equal(seen.status, "approved");
    assert.deepEqual(seen.owner, { kind: "org", id: org.id });
    const row = (await get(o.t, "/v1/operator/onprem/access-requests", OPERATOR_TOKEN))
      .json()
      .find((r: { id: string }) => r.id === id);
    assert.equal(row.scope, "org");
    assert.equal(row.account_id, admin.id);
    // the organization's approval is not the member's personal one
    assert.equal((await get(o.t, "/v1/onprem/access?scope=me", member.token)).json().status, "none");
    // the owner may ask too (for its own account here)
    assert.equal((await request(org.owner.token, { scope: "me" })).statusCode, 201);
  });

  test("terms: the current version and address, accepted by the caller only for that version", async () => {
    const u = await signup(o.t.app);
    const before = await get(o.t, "/v1/onprem/terms", u.token);
    assert.equal(before.statusCode, 200, before.body);
    assert.deepEqual(before.json(), {
      version: TERMS_VERSION,
      url: "https://example.com/onprem/terms",
      accepted: false,
      accepted_at: null,
    });
    expectError(await post(o.t, "/v1/onprem/terms/accept", u.token, { version: "2020-01-01" }), 400, "invalid_request");
    await acceptTerms(o.t, u.token);
    const accepted = (await get(o.t, "/v1/onprem/terms", u.token)).json();
    assert.equal(accepted.accepted, true);
    assert.ok(accepted.accepted_at);
    await acceptTerms(o.t, u.token); // again: no change
    assert.equal((await get(o.t, "/v1/onprem/terms", u.token)).json().accepted_at, accepted.accepted_at);

    // a platform on a new terms version (same store): the acceptance of the old one no longer counts
    const next = await createTestApp({ databaseUrl: o.t.url, env: { ONPREM_TERMS_VERSION: "2027-01-01" } });
    try {
      await approve(next, u.token);
      const t2 = (await call(next.app, { url: "/v1/onprem/terms", token: u.token })).json();
      assert.equal(t2.version, "2027-01-01");
      assert.equal(t2.accepted, false);
      const trial = () =>
        call(next.app, { method: "POST", url: "/v1/onprem/licenses/trial", token: u.token, body: { customer: "A" } });
      expectError(await trial(), 412, "terms_required");
      expectError(
        await call(next.app, {
          method: "POST",
          url: "/v1/onprem/terms/accept",
          token: u.token,
          body: { version: TERMS_VERSION },
        }),
        400,
        "invalid_request",
      );
      await acceptTerms(next, u.token, "2027-01-01");
      assert.equal((await trial()).statusCode, 201);
    } finally {
      await next.close();
    }
  });

  test("download, trial and purchase: 403 onprem_approval_required before approval, then 412 terms_required", async () => {
    const u = await signup(o.t.app);
    const publish = await call(o.t.app, {
      method: "POST",
      url: "/v1/operator/onprem/releases?version=0.0.1-gate&architecture=amd64",
      token: OPERATOR_TOKEN,
      headers: { "content-type": "application/octet-stream" },
      body: Buffer.from("bundle bytes"),
    });
    assert.equal(publish.statusCode, 201, publish.body);
    const releaseId = publish.json().id;
    const gated = async () => [
      await post(o.t, "/v1/onprem/licenses/trial", u.token, { customer: "Acme", scope: "me" }),
      await post(o.t, "/v1/onprem/orders", u.token, { hosts: 2, months: 1, customer: "Acme", scope: "me" }),
      await post(o.t, `/v1/onprem/releases/${releaseId}/download`, u.token, {}),
    ];
    for (const res of await gated()) expectError(res, 403, "onprem_approval_required");
    await acceptTerms(o.t, u.token);
    for (const res of await gated()) expectError(res, 403, "onprem_approval_required");
    // approved without terms (terms of another person do not count)
    const v = await signup(o.t.app);
    await approve(o.t, v.token);
    for (const res of [
      await post(o.t, "/v1/onprem/licenses/trial", v.token, { customer: "Acme" }),
      await post(o.t, "/v1/onprem/orders", v.token, { hosts: 2, months: 1, customer: "Acme" }),
      await post(o.t, `/v1/onprem/releases/${releaseId}/download`, v.token, {}),
    ])
      expectError(res, 412, "terms_required");
    await approve(o.t, u.token);
    const [trial, order, download] = await gated();
    assert.equal(trial.statusCode, 201, trial.body);
    assert.equal(order.statusCode, 201, order.body);
    assert.equal(download.statusCode, 200, download.body);
  });

  test("pricing comes from configuration; the public rows need no token, the account rows refuse scoped keys", async () => {
    const u = await signup(o.t.app);
    const pricing = await get(o.t, "/v1/onprem/pricing", u.token);
    assert.equal(pricing.statusCode, 200, pricing.body);
    assert.deepEqual(pricing.json(), {
      currency: "KRW",
      price_per_host_month_krw: 100000,
      allowed_months: [1, 3, 6, 12],
      min_hosts: 1,
      max_hosts: 1000,
      trial: { days: 30, hosts: 3, once_per_owner: true },
    });
    for (const url of ["/v1/onprem/latest", "/v1/onprem/license-key"])
      assert.equal((await get(o.t, url)).statusCode, 200, url);
    for (const url of ["/v1/onprem/access", "/v1/onprem/terms", "/v1/onprem/pricing", "/v1/onprem/licenses"])
      expectError(await get(o.t, url), 401, "auth_required");
    const key = await scopedKey(o.t.app, u.token, ["*"]);
    for (const url of ["/v1/onprem/access", "/v1/onprem/terms", "/v1/onprem/pricing", "/v1/onprem/releases"])
      expectError(await get(o.t, url, key), 403, "scope_insufficient");
    expectError(
      await post(o.t, "/v1/onprem/access/request", key, { company: "A", contact: "a@b.c" }),
      403,
      "scope_insufficient",
    );
    // operator rows take the operator token only
    expectError(await get(o.t, "/v1/operator/onprem/access-requests", u.token), 401);
  });
});
