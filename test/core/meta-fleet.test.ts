import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import {
  FLEET_TOKEN,
  OPERATOR_TOKEN,
  call,
  createTestApp,
  expectError,
  scopedKey,
  signup,
  type TestApp,
} from "../helpers/app.js";

describe("meta", () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(async () => {
    await t.close();
  });

  describe("fleet patch reports", () => {
    const report = (host: string) => ({
      host,
      os: "Debian 12",
      kernel: "6.1.0-18-amd64",
      pending_updates: 3,
      security_updates: 1,
      reboot_required: true,
      packages: [{ name: "openssl", version: "3.0.11-1" }],
    });
    const listReports = (token: string | undefined, q = "") =>
      call(t.app, { url: `/v1/operator/fleet/patch-reports${q}`, token });

    test("POST /v1/fleet/patch-report with FLEET_TOKEN is stored and listed for the operator, newest first", async () => {
      const hostA = `host-a-${randomUUID()}`;
      const hostB = `host-b-${randomUUID()}`;
      const a = await call(t.app, {
        method: "POST",
        url: "/v1/fleet/patch-report",
        token: FLEET_TOKEN,
        body: report(hostA),
      });
      assert.equal(a.statusCode, 202, a.body);
      assert.equal(typeof a.json().id, "string");
      const b = await call(t.app, {
        method: "POST",
        url: "/v1/fleet/patch-report",
        token: FLEET_TOKEN,
        body: { host: hostB },
      });
      assert.equal(b.statusCode, 202, b.body);

      const res = await listReports(OPERATOR_TOKEN);
      assert.equal(res.statusCode, 200, res.body);
      const items = res.json();
      const ia = items.findIndex((x: { host: string }) => x.host === hostA);
      const ib = items.findIndex((x: { host: string }) => x.host === hostB);
      assert.ok(ia >= 0 && ib >= 0, "both reports are listed");
      assert.ok(ib < ia, "newest first");
      const { host: _h, ...rest } = report(hostA);
      assert.deepEqual(items[ia].report, rest);
      assert.equal(items[ia].id, a.json().id);
      assert.ok(Math.abs(Date.parse(items[ia].received_at) - Date.now()) < 60_000);

      const one = await listReports(OPERATOR_TOKEN, "?limit=1");
      assert.equal(one.json().length, 1);
      assert.equal(one.json()[0].host, hostB);
    });

    test("the fleet endpoint refuses user tokens, scoped keys and the operator token with 401, storing nothing", async () => {
      const u = await signup(t.app);
      const key = await scopedKey(t.app, u.token, ["*"]);
      const before = (await listReports(OPERATOR_TOKEN, "?limit=500")).json().length;
      for (const token of [undefined, u.token, key, OPERATOR_TOKEN, `${FLEET_TOKEN}x`, FLEET_TOKEN.slice(0, -1)]) {
        expectError(
          await call(t.app, { method: "POST", url: "/v1/fleet/patch-report", token, body: report("intruder") }),
          401,
          "auth_required",
        );
      }
      const after = (await listReports(OPERATOR_TOKEN, "?limit=500")).json();
      assert.equal(after.length, before);
      assert.ok(!after.some((x: { host: string }) => x.host === "intruder"));
    });

    test("the report listing refuses user tokens, scoped keys and the fleet token with 401", async () => {
      const u = await signup(t.app);
      const key = await scopedKey(t.app, u.token, ["*"]);
      for (const token of [undefined, u.token, key, FLEET_TOKEN])
        expectError(await listReports(token), 401, "auth_required");
    });

    test("a malformed report is 400 naming the field", async () => {
      for (const [body, field] of [
        [{ os: "x" }, "host"],
        [{ host: "h", extra: 1 }, "extra"],
        [{ host: "h", pending_updates: -1 }, "pending_updates"],
      ] as const) {
        const res = await call(t.app, { method: "POST", url: "/v1/fleet/patch-report", token: FLEET_TOKEN, body });
        expectError(res, 400, "invalid_request");
        assert.match(res.json().error.message, new RegExp(field));
      }
    });
  });

  test("callers with a wrong operator or fleet token do not use up the operator's or the fleet's rate limit", async () => {
    const limited = await createTestApp({ env: { RATE_LIMIT_RPS: "5" } });
    try {
      // stay inside one one-second window
      while (Date.now() % 1000 > 600) await new Promise((r) => setTimeout(r, 20));
      for (let i = 0; i < 6; i++) {
        await call(limited.app, { url: "/v1/operator/fleet/patch-reports", token: "guessing-the-operator-token" });
        await call(limited.app, {
          method: "POST",
          url: "/v1/fleet/patch-report",
          token: "guessing-the-fleet-token",
          body: { host: "x" },
        });
      }
      assert.equal(
        (await call(limited.app, { url: "/v1/operator/fleet/patch-reports", token: OPERATOR_TOKEN })).statusCode,
        200,
      );
      assert.equal(
        (
          await call(limited.app, {
            method: "POST",
            url: "/v1/fleet/patch-report",
            token: FLEET_TOKEN,
            body: { host: "real" },
          })
        ).statusCode,
        202,
      );
    } finally {
      await limited.close();
    }
  });
});
