/**
 * Partner platforms (issue 26, src/partner): partner accounts made by the operator, child identities and their
 * tokens, isolation, credit, admission (funds, department quotas) and the department chart, all through HTTP.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { call, createTestApp, expectError, OPERATOR_TOKEN, scopedKey, signup, type TestApp } from "../helpers/app.js";
import { testImage } from "../helpers/images.js";

describe("partner platforms", () => {
  let t: TestApp;
  let image: string;
  let partner: { token: string; id: string };
  let key: string;

  const asPartner = (
    method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE",
    url: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ) => call(t.app, { method, url, token: key, body, headers });

  /** a new child with a first token of the given scopes */
  async function child(extra: Record<string, unknown> = {}, scopes = ["pods:*"]) {
    const res = await asPartner("POST", "/v1/partner/users", {
      external_ref: `ext-${randomUUID()}`,
      token: { scopes },
      ...extra,
    });
    assert.equal(res.statusCode, 201, res.body);
    return { id: res.json().id as string, token: res.json().token.key as string };
  }

  const createPod = (token: string, body: Record<string, unknown> = {}) =>
    call(t.app, {
      method: "POST",
      url: "/v1/pods",
      token,
      body: { name: `p${randomUUID().slice(0, 8)}`, image, size: "nano", ...body },
    });

  const operatorSet = (id: string, body: unknown) =>
    call(t.app, { method: "PUT", url: `/v1/operator/partners/${id}`, token: OPERATOR_TOKEN, body });

  before(async () => {
    image = await testImage("TEST_IMAGE_HTTPD_V1");
    t = await createTestApp({ env: { APPS_ALLOW_LOCAL_IMAGES: "1" } });
    partner = await signup(t.app);
    const made = await operatorSet(partner.id, {});
    assert.equal(made.statusCode, 200, made.body);
    key = await scopedKey(t.app, partner.token, ["partner:*"]);
  });
  after(async () => {
    await t?.close();
  });

  test("the operator makes a partner; profile, visitor_login_url, postpaid needs a limit, others get 403", async () => {
    const plain = await signup(t.app);
    expectError(await call(t.app, { url: "/v1/partner", token: plain.token }), 403, "partner_required");
    expectError(await operatorSet(plain.id, { billing_mode: "partner_postpaid" }), 400, "invalid_request");
    expectError(await operatorSet(randomUUID(), {}), 404, "not_found");
    expectError(
      await call(t.app, { method: "PUT", url: `/v1/operator/partners/${plain.id}`, token: plain.token, body: {} }),
      401,
      "auth_required",
    );

    for (const token of [partner.token, key]) {
      const me = await call(t.app, { url: "/v1/partner", token });
      assert.equal(me.statusCode, 200, me.body);
      assert.equal(me.json().billing_mode, "child_prepaid");
      assert.equal(me.json().month_usage_krw, 0);
      assert.equal(me.json().visitor_login_url, null);
    }
    expectError(
      await asPartner("PATCH", "/v1/partner", { visitor_login_url: "http://partner.example/login" }),
      400,
      "invalid_request",
    );
    const https = await asPartner("PATCH", "/v1/partner", { visitor_login_url: "https://partner.example/login" });
    assert.equal(https.json().visitor_login_url, "https://partner.example/login");
    const loopback = await asPartner("PATCH", "/v1/partner", { visitor_login_url: "http://127.0.0.1:9/login" });
    assert.equal(loopback.statusCode, 200, loopback.body);

    // postpaid with a limit, then back; a read key cannot write
    const post = await operatorSet(plain.id, { billing_mode: "partner_postpaid", monthly_limit_krw: 50_000 });
    assert.equal(post.statusCode, 200, post.body);
    assert.deepEqual([post.json().billing_mode, post.json().monthly_limit_krw], ["partner_postpaid", 50_000]);
    const readKey = await scopedKey(t.app, partner.token, ["partner:read"]);
    expectError(
      await call(t.app, { method: "PATCH", url: "/v1/partner", token: readKey, body: {} }),
      403,
      "scope_insufficient",
    );
  });

  test("a child is issued once per external_ref; opaque refs and department codes are checked", async () => {
    const ref = `ext-${randomUUID()}`;
    const first = await asPartner("POST", "/v1/partner/users", {
      external_ref: ref,
      tenant_ref: "t-1",
      token: { scopes: ["pods:read"] },
    });
    assert.equal(first.statusCode, 201, first.body);
    assert.match(first.json().token.key, /^opk_/);
    const again = await asPartner("POST", "/v1/partner/users", { external_ref: ref });
    assert.equal(again.statusCode, 200, again.body);
    assert.equal(again.json().id, first.json().id);
    assert.equal(again.json().token, null);

    for (const bad of [
      { external_ref: "kim@corp.example" },
      { external_ref: "a b" },
      { external_ref: "x", tenant_ref: "t\t1" },
    ])
      expectError(await asPartner("POST", "/v1/partner/users", bad), 400, "invalid_request");
    expectError(
      await asPartner("POST", "/v1/partner/users", { external_ref: "y", department_code: "nope" }),
      400,
      "unknown_department",
    );
    expectError(
      await asPartner("PATCH", "/v1/partner/users", { id: first.json().id, department_code: "nope" }),
      400,
      "unknown_department",
    );
    const patched = await asPartner("PATCH", "/v1/partner/users", {
      id: first.json().id,
      tenant_ref: "t-2",
      monthly_cap_krw: 9000,
    });
    assert.deepEqual([patched.json().tenant_ref, patched.json().monthly_cap_krw], ["t-2", 9000]);

    await child();
    const listed = await asPartner("GET", "/v1/partner/users?limit=1");
    assert.equal(listed.json().items.length, 1, listed.body);
    assert.ok(listed.json().next_cursor, listed.body);
    const rest = await asPartner("GET", `/v1/partner/users?cursor=${listed.json().next_cursor}`);
    assert.equal(rest.statusCode, 200, rest.body);
    assert.ok(rest.json().items.length >= 1);
    assert.ok(!rest.json().items.some((c: { id: string }) => c.id === listed.json().items[0].id));
  });

  test("child tokens are least-privilege, expire, and cannot call /v1/partner", async () => {
    const c = await child();
    for (const scopes of [["partner:*"], ["*"], ["org:read"], ["billing:write"], ["partner:read", "pods:read"]])
      expectError(await asPartner("POST", `/v1/partner/users/${c.id}/tokens`, { scopes }), 400, "invalid_scope");
    expectError(
      await asPartner("POST", `/v1/partner/users/${c.id}/tokens`, { scopes: ["pods:read"], expires_in_days: 366 }),
      400,
      "invalid_request",
    );
    const issued = await asPartner("POST", `/v1/partner/users/${c.id}/tokens`, { scopes: ["pods:read"] });
    assert.equal(issued.statusCode, 201, issued.body);
    const days = (Date.parse(issued.json().expires_at) - Date.now()) / 86_400_000;
    assert.ok(days > 29 && days <= 30, `expires in ${days} days`);
    // a partner narrowing its ceiling narrows what children get
    await asPartner("PATCH", "/v1/partner", { child_scopes: ["pods:read"] });
    expectError(
      await asPartner("POST", `/v1/partner/users/${c.id}/tokens`, { scopes: ["pods:write"] }),
      400,
      "invalid_scope",
    );
    await asPartner("PATCH", "/v1/partner", { child_scopes: null });

    expectError(await call(t.app, { url: "/v1/partner", token: c.token }), 403, "scope_insufficient");
    expectError(await call(t.app, { url: "/v1/me", token: c.token }), 403, "scope_insufficient");
    expectError(
      await call(t.app, { url: "/v1/pods", token: c.token, headers: { "x-owner": "org" } }),
      403,
      "forbidden_role",
    );
    assert.equal((await call(t.app, { url: "/v1/pods", token: c.token })).statusCode, 200);
    const tokens = await asPartner("GET", `/v1/partner/users/${c.id}/tokens`);
    assert.equal(tokens.json().items.length, 2);
  });

  test("a child sees only its own resources; deleting it revokes its tokens and hands its resources to the partner", async () => {
    const a = await child();
    const b = await child();
    const own = await createPod(partner.token);
    assert.equal(own.statusCode, 201, own.body);
    const podA = await createPod(a.token);
    assert.equal(podA.statusCode, 201, podA.body);
    expectError(await call(t.app, { url: `/v1/pods/${own.json().id}`, token: a.token }), 404, "not_found");
    expectError(await call(t.app, { url: `/v1/pods/${podA.json().id}`, token: b.token }), 404, "not_found");
    expectError(await call(t.app, { url: `/v1/pods/${podA.json().id}`, token: partner.token }), 404, "not_found");
    const listA = (await call(t.app, { url: "/v1/pods", token: a.token })).json();
    assert.deepEqual(
      (listA.items ?? listA).map((p: { id: string }) => p.id),
      [podA.json().id],
    );
    // another partner's key cannot reach this partner's children
    expectError(await asPartner("GET", `/v1/partner/users/${randomUUID()}`), 404, "not_found");

    const gone = await asPartner("DELETE", `/v1/partner/users/${a.id}`);
    assert.equal(gone.statusCode, 204, gone.body);
    expectError(await call(t.app, { url: "/v1/pods", token: a.token }), 401, "auth_required");
    expectError(await asPartner("GET", `/v1/partner/users/${a.id}`), 404, "not_found");
    assert.equal((await call(t.app, { url: `/v1/pods/${podA.json().id}`, token: partner.token })).statusCode, 200);
    // a revoked single token too
    const issued = await asPartner("POST", `/v1/partner/users/${b.id}/tokens`, { scopes: ["pods:read"] });
    assert.equal((await asPartner("DELETE", `/v1/partner/users/${b.id}/tokens/${issued.json().id}`)).statusCode, 204);
    expectError(await call(t.app, { url: "/v1/pods", token: issued.json().key }), 401, "auth_required");
  });

  test("credit moves money once per Idempotency-Key; 402 when short; a child's paid creation needs its balance", async () => {
    const funded = await call(t.app, {
      method: "POST",
      url: `/v1/operator/accounts/${partner.id}/credit`,
      token: OPERATOR_TOKEN,
      headers: { "idempotency-key": `fund-${partner.id}` },
      body: { amount: 10_000, currency: "KRW", reason: "partner deposit" },
    });
    assert.equal(funded.statusCode, 201, funded.body);
    const c = await child();
    const paid = await createPod(c.token, { size: "micro" });
    expectError(paid, 402, "insufficient_funds");
    assert.equal((await createPod(c.token)).statusCode, 201); // nano is free

    const send = () =>
      asPartner(
        "POST",
        `/v1/partner/users/${c.id}/credit`,
        { amount_krw: 3000 },
        { "idempotency-key": `credit-${c.id}` },
      );
    const answers = await Promise.all([send(), send(), send(), send()]);
    for (const a of answers) assert.equal(a.statusCode, 200, a.body);
    assert.equal(new Set(answers.map((a) => a.json().transaction_id)).size, 1);
    const last = await send();
    assert.deepEqual([last.json().child_balance_krw, last.json().partner_balance_krw], [3000, 7000]);

    expectError(await asPartner("POST", `/v1/partner/users/${c.id}/credit`, { amount_krw: 1 }), 400, "invalid_request");
    expectError(
      await asPartner(
        "POST",
        `/v1/partner/users/${c.id}/credit`,
        { amount_krw: 8000 },
        { "idempotency-key": `big-${c.id}` },
      ),
      402,
      "insufficient_funds",
    );
    expectError(
      await asPartner(
        "POST",
        `/v1/partner/users/${randomUUID()}/credit`,
        { amount_krw: 1 },
        { "idempotency-key": "x" },
      ),
      404,
      "not_found",
    );
    assert.equal((await createPod(c.token, { size: "micro" })).statusCode, 201);
  });

  test("a child's monthly cap and the partner's monthly limit stop new paid creation; free creation passes", async () => {
    const p2 = await signup(t.app);
    assert.equal((await operatorSet(p2.id, { monthly_limit_krw: 1000 })).statusCode, 200);
    const issue = async (extra: Record<string, unknown>) => {
      const res = await call(t.app, {
        method: "POST",
        url: "/v1/partner/users",
        token: p2.token,
        body: { external_ref: `ext-${randomUUID()}`, token: { scopes: ["pods:*"] }, ...extra },
      });
      assert.equal(res.statusCode, 201, res.body);
      return { id: res.json().id as string, token: res.json().token.key as string };
    };
    /** what a metering run leaves: a usage record of `krw` this month for the child */
    const usage = async (childId: string, krw: number) => {
      const { rows } = await t.db.query<{ id: string }>(
        "SELECT id FROM ledger_wallets WHERE owner_kind = 'partner_child' AND owner_id = $1 AND currency = 'KRW'",
        [childId],
      );
      await t.db.query(
        `INSERT INTO usage_records (resource_kind, resource_id, account_id, owner_kind, owner_id, wallet_id, interval_start,
           interval_seconds, size, state, storage_gb, instance_micro, storage_micro)
         VALUES ('pod', $1, $2, 'partner_child', $3, $4, date_trunc('minute', now()), 300, 'micro', 'running', 0, $5, 0)`,
        [randomUUID(), p2.id, childId, rows[0].id, krw * 1_000_000],
      );
    };
    const capped = await issue({ monthly_cap_krw: 100 });
    await usage(capped.id, 150);
    expectError(await createPod(capped.token, { size: "micro" }), 402, "partner_child_monthly_limit");
    assert.equal((await createPod(capped.token)).statusCode, 201);

    const other = await issue({});
    expectError(await createPod(other.token, { size: "micro" }), 402, "insufficient_funds"); // under the limit: funds decide
    await usage(other.id, 900);
    expectError(await createPod(other.token, { size: "micro" }), 402, "partner_monthly_limit");
    assert.equal((await createPod(other.token)).statusCode, 201);
    const profile = await call(t.app, { url: "/v1/partner", token: p2.token });
    assert.deepEqual([profile.json().month_usage_krw, profile.json().child_count], [1050, 2]);
  });

  test("the department chart answers per item, refuses cycles and unknown parents", async () => {
    const push = (departments: unknown[]) => asPartner("PUT", "/v1/partner/departments", { departments });
    const chart = [{ code: "hq" }, { code: "dev", parentCode: "hq" }, { code: "ops", parentCode: "hq", name: "Ops" }];
    const results = (res: { json: () => any }) =>
      Object.fromEntries(res.json().items.map((i: { code: string; result: string }) => [i.code, i.result]));
    assert.deepEqual(results(await push(chart)), { hq: "insert", dev: "insert", ops: "insert" });
    assert.deepEqual(results(await push(chart)), { hq: "skip", dev: "skip", ops: "skip" });
    const next = [
      { code: "hq" },
      { code: "ops", parentCode: "hq", name: "Operations" },
      { code: "qa", parentCode: "ops" },
    ];
    assert.deepEqual(results(await push(next)), { hq: "skip", ops: "update", qa: "insert", dev: "delete" });
    expectError(
      await push([
        { code: "a", parentCode: "b" },
        { code: "b", parentCode: "a" },
      ]),
      400,
      "invalid_request",
    );
    expectError(await push([{ code: "a", parentCode: "zz" }]), 400, "invalid_request");
    expectError(await asPartner("PUT", "/v1/partner/departments/nope/policy", { max_running: 1 }), 404, "not_found");
    const listed = await asPartner("GET", "/v1/partner/departments");
    assert.deepEqual(
      listed.json().items.map((d: { code: string }) => d.code),
      ["hq", "ops", "qa"],
    );
  });

  test("a department's run limit counts sub-departments: parallel starts at the limit, one wins; deploy_blocked 403", async () => {
    const push = await asPartner("PUT", "/v1/partner/departments", {
      departments: [{ code: "co" }, { code: "team-a", parentCode: "co" }, { code: "team-b", parentCode: "co" }],
    });
    assert.equal(push.statusCode, 200, push.body);
    const policy = await asPartner("PUT", "/v1/partner/departments/co/policy", { max_running: 1 });
    assert.equal(policy.statusCode, 200, policy.body);
    const a = await child({ department_code: "team-a" });
    const b = await child({ department_code: "team-b" });

    const both = await Promise.all([createPod(a.token), createPod(b.token)]);
    assert.deepEqual(both.map((r) => r.statusCode).sort(), [201, 429], both.map((r) => r.body).join(" "));
    const loser = both[0].statusCode === 429 ? both[0] : both[1];
    expectError(loser, 429, "quota_exceeded");
    const winner = both.find((r) => r.statusCode === 201)!;
    const winnerToken = winner === both[0] ? a.token : b.token;
    const otherToken = winner === both[0] ? b.token : a.token;

    // stopping frees the slot; starting again is admitted like a creation
    const podId = winner.json().id;
    assert.equal(
      (await call(t.app, { method: "POST", url: `/v1/pods/${podId}/stop`, token: winnerToken })).statusCode,
      202,
    );
    assert.equal((await createPod(otherToken)).statusCode, 201);
    expectError(
      await call(t.app, { method: "POST", url: `/v1/pods/${podId}/start`, token: winnerToken }),
      429,
      "quota_exceeded",
    );

    const group = await call(t.app, {
      method: "POST",
      url: "/v1/pod-groups",
      token: winnerToken,
      body: { name: "grp", image, size: "nano", replica_min: 1, replica_max: 2 },
    });
    expectError(group, 429, "quota_exceeded");

    await asPartner("PUT", "/v1/partner/departments/co/policy", { max_running: null, deploy_blocked: true });
    expectError(await createPod(a.token), 403, "department_deploy_blocked");
    await asPartner("PUT", "/v1/partner/departments/co/policy", { max_running: null, deploy_blocked: false });
    assert.equal((await createPod(a.token)).statusCode, 201);
  });
});
