import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { call, createTestApp, expectError, scopedKey, signup, type TestApp } from "../helpers/app.js";

const report = (i = 0) => ({
  occurred_at: "2026-01-02T03:04:05Z",
  kind: "http_error",
  cli_version: "1.4.2",
  os: "linux-x64",
  command: "db create",
  flags: ["--size", "dev"],
  status: 503,
  code: "provision_failed",
  cf_ray: `8f${i}`,
  edge: "ICN",
  retries: 2,
  message: `capacity not available (${i})`,
  api_host: "api.example.com",
});

/** A request body of exactly `bytes` bytes (ASCII), made of reports with padded messages. */
function bodyOfSize(bytes: number): string {
  const count = 20;
  const reports = Array.from({ length: count }, (_, i) => ({ ...report(i), message: "" }));
  const base = JSON.stringify({ reports }).length;
  const pad = bytes - base;
  assert.ok(pad > 0 && pad < count * 8000);
  const per = Math.floor(pad / count);
  reports.forEach((r, i) => {
    r.message = "x".repeat(per + (i === 0 ? pad - per * count : 0));
  });
  const text = JSON.stringify({ reports });
  assert.equal(Buffer.byteLength(text), bytes);
  return text;
}

describe("POST /v1/cli/errors", () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(async () => {
    await t.close();
  });

  const send = (token: string | undefined, body: unknown) =>
    call(t.app, {
      method: "POST",
      url: "/v1/cli/errors",
      token,
      body,
      headers: { "content-type": "application/json" },
    });
  const stored = async (accountId: string) =>
    (
      await t.db.query<{ n: number }>("SELECT count(*)::int AS n FROM cli_error_reports WHERE account_id = $1", [
        accountId,
      ])
    ).rows[0].n;
  /** Reports already received for an account, inserted directly to reach the daily limit quickly. */
  const preload = (accountId: string, n: number, age = "0 seconds") =>
    t.db.query(
      "INSERT INTO cli_error_reports (account_id, owner_kind, owner_id, report, received_at) SELECT $1, 'account', $1, '{}'::jsonb, now() - $3::interval FROM generate_series(1, $2)",
      [accountId, n, age],
    );

  test("a full-access token gets 204 with no body, and the reports are stored for its account and token", async () => {
    const u = await signup(t.app);
    const res = await send(u.token, { reports: [report(1), report(2)] });
    assert.equal(res.statusCode, 204, res.body);
    assert.equal(res.body, "");
    const tokenId = (await call(t.app, { url: "/v1/token", token: u.token })).json().id;
    const { rows } = await t.db.query(
      "SELECT token_id, report FROM cli_error_reports WHERE account_id = $1 ORDER BY id",
      [u.id],
    );
    assert.equal(rows.length, 2);
    assert.equal(rows[0].token_id, tokenId);
    assert.deepEqual(rows[0].report, report(1));
    assert.deepEqual(rows[1].report, report(2));
  });

  test("a scoped key with any scope gets 204 too", async () => {
    const u = await signup(t.app);
    for (const scopes of [["databases:read"], ["pods:read:web-1"], ["billing:*"]]) {
      const key = await scopedKey(t.app, u.token, scopes);
      const res = await send(key, { reports: [report()] });
      assert.equal(res.statusCode, 204, `${scopes}: ${res.body}`);
    }
    assert.equal(await stored(u.id), 3);
  });

  test("without a token, or with an invalid or revoked one, it is 401 auth_required", async () => {
    const u = await signup(t.app);
    expectError(await send(undefined, { reports: [report()] }), 401, "auth_required");
    expectError(await send("op_u_not-a-token", { reports: [report()] }), 401, "auth_required");
    const key = await scopedKey(t.app, u.token, ["*"]);
    const keyId = (await call(t.app, { url: "/v1/token", token: key })).json().id;
    await call(t.app, { method: "DELETE", url: `/v1/api-keys/${keyId}`, token: u.token });
    expectError(await send(key, { reports: [report()] }), 401, "auth_required");
    assert.equal(await stored(u.id), 0);
  });

  test("20 reports in one request are accepted; 21 are 400 and none is stored", async () => {
    const u = await signup(t.app);
    const many = (n: number) => ({ reports: Array.from({ length: n }, (_, i) => report(i)) });
    const over = await send(u.token, many(21));
    expectError(over, 400, "invalid_request");
    assert.match(over.json().error.message, /reports/);
    assert.equal(await stored(u.id), 0);
    assert.equal((await send(u.token, many(20))).statusCode, 204);
    assert.equal(await stored(u.id), 20);
  });

  test("a body of exactly 64 KB is accepted; one byte more is 413 payload_too_large", async () => {
    const u = await signup(t.app);
    const ok = await send(u.token, bodyOfSize(64 * 1024));
    assert.equal(ok.statusCode, 204, ok.body);
    const big = await send(u.token, bodyOfSize(64 * 1024 + 1));
    expectError(big, 413, "payload_too_large");
    expectError(await send(u.token, bodyOfSize(150 * 1024)), 413, "payload_too_large");
    assert.equal(await stored(u.id), 20, "only the accepted request's reports are stored");
  });

  test("malformed bodies are 400, never 500: no reports, unknown fields, wrong types, bad JSON", async () => {
    const u = await signup(t.app);
    const bad: unknown[] = [
      {},
      { reports: [] },
      { reports: "oops" },
      { reports: [report()], extra: true },
      { reports: [{ ...report(), secret: "x" }] },
      { reports: [{ ...report(), status: "503" }] },
      { reports: [{ ...report(), occurred_at: "yesterday" }] },
      { reports: [{ ...report(), retries: -1 }] },
      { reports: [{ ...report(), message: "m".repeat(8001) }] },
      { reports: [null] },
    ];
    for (const body of bad) expectError(await send(u.token, body), 400, "invalid_request");
    expectError(await send(u.token, '{"reports": ['), 400, "bad_json");
    assert.equal(await stored(u.id), 0);
    // every field is optional: a minimal report is fine
    assert.equal((await send(u.token, { reports: [{}] })).statusCode, 204);
  });

  describe("500 reports per user per 24 hours", () => {
    test("up to exactly 500 is accepted; the 501st is a clear 429 and is not stored", async () => {
      const u = await signup(t.app);
      await preload(u.id, 499);
      assert.equal((await send(u.token, { reports: [report()] })).statusCode, 204, "report 500 is accepted");
      assert.equal(await stored(u.id), 500);
      const res = await send(u.token, { reports: [report()] });
      expectError(res, 429);
      assert.match(res.json().error.message, /500/);
      assert.match(res.json().error.message, /24 hours/);
      assert.ok(Number(res.headers["retry-after"]) > 0, "Retry-After says when to try again");
      assert.equal(await stored(u.id), 500);
    });

    test("a request that would cross the limit is refused whole; one that reaches it exactly is accepted", async () => {
      const u = await signup(t.app);
      await preload(u.id, 490);
      const eleven = { reports: Array.from({ length: 11 }, (_, i) => report(i)) };
      const res = await send(u.token, eleven);
      expectError(res, 429);
      assert.match(res.json().error.message, /10 remain/);
      assert.equal(await stored(u.id), 490, "nothing of the refused request is stored");
      assert.equal((await send(u.token, { reports: eleven.reports.slice(0, 10) })).statusCode, 204);
      assert.equal(await stored(u.id), 500);
    });

    test("the limit is per user: all of an account's tokens share it, other accounts are unaffected", async () => {
      const u = await signup(t.app);
      const other = await signup(t.app);
      await preload(u.id, 500);
      const key = await scopedKey(t.app, u.token, ["databases:read"]);
      const second = (
        await call(t.app, {
          method: "POST",
          url: "/v1/auth/login",
          body: { email: u.email, password: "correct horse battery" },
        })
      ).json().token;
      for (const token of [u.token, key, second]) expectError(await send(token, { reports: [report()] }), 429);
      assert.equal((await send(other.token, { reports: [report()] })).statusCode, 204);
    });

    test("reports older than 24 hours no longer count", async () => {
      const u = await signup(t.app);
      await preload(u.id, 500, "24 hours 1 minute");
      await preload(u.id, 499, "23 hours 59 minutes");
      assert.equal((await send(u.token, { reports: [report()] })).statusCode, 204);
      expectError(await send(u.token, { reports: [report()] }), 429);
    });

    test("concurrent requests cannot together slip past the limit", async () => {
      const u = await signup(t.app);
      await preload(u.id, 495);
      const results = await Promise.all(
        Array.from({ length: 6 }, (_, i) => send(u.token, { reports: [report(i), report(i + 10)] })),
      );
      const accepted = results.filter((r) => r.statusCode === 204).length;
      assert.equal(accepted, 2, results.map((r) => r.statusCode).join(","));
      assert.ok(results.every((r) => r.statusCode === 204 || r.statusCode === 429));
      assert.equal(await stored(u.id), 499);
    });
  });
});
