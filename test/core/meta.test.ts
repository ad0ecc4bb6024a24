import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { Validator } from "@seriousme/openapi-schema-validator";
import type { RouteEntry } from "../../src/http/route-table.js";
import { ERROR_CATALOG } from "../../src/http/errors.js";
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

const HANGUL = /[\uac00-\ud7a3]/;
/** Routes only the platform operator can call (operator token or fleet token); the manual leaves them out. */
const operatorOnly = (r: RouteEntry) => "operator" in r.auth || "fleet" in r.auth;
const manualLine = (r: RouteEntry) => `${r.method} ${r.url.replace(/:(\w+)/g, "{$1}")} - `;
const openApiPath = (url: string) => url.replace(/:(\w+)/g, "{$1}");

describe("meta", () => {
  let t: TestApp;
  let table: RouteEntry[];
  before(async () => {
    t = await createTestApp();
    table = (t.app as any).routeTable;
  });
  after(async () => {
    await t.close();
  });

  test("GET /v1/edition is public and names edition, base domain and login method", async () => {
    const res = await call(t.app, { url: "/v1/edition" });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), { edition: "saas", base_domain: "localhost", login_method: "password" });
  });

  test("the route table is populated and every path begins with /v1", () => {
    assert.ok(table.length >= 20, `route table has ${table.length} routes`);
    for (const r of table) assert.match(r.url, /^\/v1\//, `${r.method} ${r.url}`);
  });

  describe("GET /v1/manual", () => {
    test("is public plain text listing every route a user can call, with its auth", async () => {
      const res = await call(t.app, { url: "/v1/manual" });
      assert.equal(res.statusCode, 200);
      assert.match(String(res.headers["content-type"]), /^text\/plain/);
      const text = res.body;
      const userRoutes = table.filter((r) => !operatorOnly(r));
      assert.ok(userRoutes.length >= 15);
      for (const r of userRoutes) {
        const line = text.split("\n").find((l) => l.startsWith(manualLine(r)));
        assert.ok(line, `manual lists ${r.method} ${r.url}`);
        assert.ok(line.length > manualLine(r).length + 10, `with a summary: ${line}`);
      }
      assert.match(
        text.split("\n").find((l) => l.startsWith("GET /v1/me - "))!,
        /account/,
      );
      assert.match(
        text.split("\n").find((l) => l.startsWith("GET /v1/edition - "))!,
        /public/,
      );
      assert.match(
        text.split("\n").find((l) => l.startsWith("GET /v1/gpus - "))!,
        /any valid token/,
      );
      assert.ok(!text.includes("/v1/operator"), "the operator API is not advertised to users");
      assert.ok(!HANGUL.test(text), "English by default");
    });

    test("the full manual prints the error catalog, every code with its status and meaning, in English and Korean", async () => {
      for (const lang of ["en", "ko"]) {
        const lines = (await call(t.app, { url: `/v1/manual?lang=${lang}` })).body.split("\n");
        for (const [code, [status, meaning]] of Object.entries(ERROR_CATALOG)) {
          assert.ok(lines.includes(`${status} ${code}: ${meaning}`), `${lang} manual lists ${code}`);
        }
      }
      assert.ok(
        !(await call(t.app, { url: "/v1/manual?brief=1" })).body.includes("email_taken"),
        "the quick start leaves the catalog out",
      );
    });

    test("?brief=1 is a shorter quick start without the endpoint list", async () => {
      const full = (await call(t.app, { url: "/v1/manual" })).body;
      for (const q of ["brief=1", "brief=true"]) {
        const res = await call(t.app, { url: `/v1/manual?${q}` });
        assert.equal(res.statusCode, 200);
        assert.match(String(res.headers["content-type"]), /^text\/plain/);
        const brief = res.body;
        assert.ok(brief.length < full.length / 2, `brief (${brief.length}) is much shorter than full (${full.length})`);
        assert.match(brief, /POST \/v1\/auth\/signup/);
        assert.match(brief, /POST \/v1\/api-keys/);
        assert.ok(!brief.includes("DELETE /v1/api-keys/{id}"), "no endpoint list");
      }
      assert.equal((await call(t.app, { url: "/v1/manual?brief=0" })).body, full);
      expectError(await call(t.app, { url: "/v1/manual?brief=yes please" }), 400, "invalid_request");
    });

    test("?lang=ko is Korean, lists the same routes, and every user route has a Korean summary", async () => {
      const res = await call(t.app, { url: "/v1/manual?lang=ko" });
      assert.equal(res.statusCode, 200);
      assert.match(String(res.headers["content-type"]), /^text\/plain/);
      const lines = res.body.split("\n");
      assert.ok(HANGUL.test(lines[0]), `title in Korean: ${lines[0]}`);
      for (const r of table.filter((x) => !operatorOnly(x))) {
        const line = lines.find((l) => l.startsWith(manualLine(r)));
        assert.ok(line, `Korean manual lists ${r.method} ${r.url}`);
        assert.ok(HANGUL.test(line.slice(manualLine(r).length)), `Korean summary for ${r.method} ${r.url}: ${line}`);
      }
      const brief = await call(t.app, { url: "/v1/manual?lang=ko&brief=1" });
      assert.ok(HANGUL.test(brief.body));
      assert.ok(brief.body.length < res.body.length / 2);
      assert.equal(
        (await call(t.app, { url: "/v1/manual?lang=en" })).body,
        (await call(t.app, { url: "/v1/manual" })).body,
      );
      expectError(await call(t.app, { url: "/v1/manual?lang=fr" }), 400, "invalid_request");
    });
  });

  describe("GET /v1/openapi.json", () => {
    test("is public OpenAPI 3.0.3, version 1.0.0, and passes a real OpenAPI validator", async () => {
      const res = await call(t.app, { url: "/v1/openapi.json" });
      assert.equal(res.statusCode, 200);
      assert.match(String(res.headers["content-type"]), /^application\/json/);
      const doc = res.json();
      assert.equal(doc.openapi, "3.0.3");
      assert.equal(doc.info.version, "1.0.0");
      const validator = new Validator();
      const result = await validator.validate(doc);
      assert.equal(result.valid, true, JSON.stringify(result.errors, null, 1));
      assert.equal(validator.version, "3.0");
    });

    test("every route of the route table appears as a path with its method and a unique operationId", async () => {
      const doc = (await call(t.app, { url: "/v1/openapi.json" })).json();
      const ids = new Set<string>();
      for (const r of table) {
        const op = doc.paths?.[openApiPath(r.url)]?.[r.method.toLowerCase()];
        assert.ok(op, `${r.method} ${r.url} is in the OpenAPI document`);
        assert.ok(op.operationId, `${r.method} ${r.url} has an operationId`);
        assert.ok(!ids.has(op.operationId), `operationId ${op.operationId} is unique`);
        ids.add(op.operationId);
        assert.ok(
          Object.keys(op.responses).some((s) => /^2\d\d$/.test(s)),
          `${r.method} ${r.url} documents its success response`,
        );
        const isPublic = "public" in r.auth;
        assert.ok(
          (isPublic || op.responses["401"]) && op.responses["400"],
          `${r.method} ${r.url} documents the error body`,
        );
        const secured = Array.isArray(op.security) && op.security.some((s: Record<string, unknown>) => "bearer" in s);
        assert.equal(
          secured,
          !("public" in r.auth),
          `${r.method} ${r.url}: bearer security matches its auth declaration`,
        );
      }
      const documented = Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(([p, ops]) =>
        Object.keys(ops).map((m) => `${m.toUpperCase()} ${p}`),
      );
      assert.equal(documented.length, table.length, "nothing documented that the server does not serve");
    });
  });

  describe("GET /v1/gpus", () => {
    test("needs a token: 401 auth_required without one or with a bad one", async () => {
      expectError(await call(t.app, { url: "/v1/gpus" }), 401, "auth_required");
      expectError(await call(t.app, { url: "/v1/gpus", token: "op_u_forged" }), 401, "auth_required");
      expectError(await call(t.app, { url: "/v1/gpus", token: OPERATOR_TOKEN }), 401, "auth_required");
    });

    test("answers any valid token, full-access or scoped with any scope, with the catalog's SKUs and integer prices", async () => {
      const u = await signup(t.app);
      const catalog = JSON.parse(readFileSync(t.config.gpuCatalogFile, "utf8"));
      const tokens = [
        u.token,
        ...(await Promise.all(
          [["billing:read"], ["pods:read:web-1"], ["org:*"], ["*"]].map((s) => scopedKey(t.app, u.token, s)),
        )),
      ];
      for (const token of tokens) {
        const res = await call(t.app, { url: "/v1/gpus", token });
        assert.equal(res.statusCode, 200, res.body);
        assert.deepEqual(res.json(), catalog);
      }
      const body = (await call(t.app, { url: "/v1/gpus", token: u.token })).json();
      assert.equal(body.currency, "KRW");
      assert.ok(body.skus.length > 0);
      assert.ok(
        body.skus.some((s: { kind: string }) => s.kind === "gpu"),
        "at least one GPU SKU",
      );
      assert.equal(new Set(body.skus.map((s: { id: string }) => s.id)).size, body.skus.length, "SKU ids are unique");
      for (const sku of body.skus) {
        assert.ok(
          Number.isInteger(sku.price_krw_per_hour) && sku.price_krw_per_hour >= 0,
          `${sku.id} price ${sku.price_krw_per_hour}`,
        );
        assert.ok(Number.isInteger(sku.vcpu) && Number.isInteger(sku.memory_gb) && Number.isInteger(sku.gpu_count));
        assert.equal(sku.kind === "gpu", sku.gpu_count > 0, `${sku.id}: a GPU SKU has GPUs, a CPU SKU none`);
      }
    });
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

  describe("POST /v1/operator/accounts", () => {
    test("creates an account with the operator token: 201 {id, email, token}; the token works on /v1/me", async () => {
      const email = `Op.Made-${randomUUID()}@Example.COM`;
      const res = await call(t.app, {
        method: "POST",
        url: "/v1/operator/accounts",
        token: OPERATOR_TOKEN,
        body: { email, display_name: "Made By Operator" },
      });
      assert.equal(res.statusCode, 201, res.body);
      const body = res.json();
      assert.deepEqual(Object.keys(body).sort(), ["email", "id", "token"]);
      assert.equal(body.email, email.toLowerCase(), "e-mail normalised");
      assert.match(body.token, /^op_u_/);
      const me = await call(t.app, { url: "/v1/me", token: body.token });
      assert.equal(me.statusCode, 200, me.body);
      assert.equal(me.json().id, body.id);
      assert.equal(me.json().email, email.toLowerCase());
      assert.equal(me.json().display_name, "Made By Operator");
      assert.equal(me.json().has_password, false);
    });

    test("a taken e-mail is 409; a bad e-mail or unknown field is 400", async () => {
      const u = await signup(t.app);
      expectError(
        await call(t.app, {
          method: "POST",
          url: "/v1/operator/accounts",
          token: OPERATOR_TOKEN,
          body: { email: u.email.toUpperCase() },
        }),
        409,
      );
      expectError(
        await call(t.app, {
          method: "POST",
          url: "/v1/operator/accounts",
          token: OPERATOR_TOKEN,
          body: { email: "not an email" },
        }),
        400,
        "invalid_request",
      );
      const extra = await call(t.app, {
        method: "POST",
        url: "/v1/operator/accounts",
        token: OPERATOR_TOKEN,
        body: { email: `x-${randomUUID()}@example.com`, password: "sneaky password" },
      });
      expectError(extra, 400, "invalid_request");
      assert.match(extra.json().error.message, /password/);
    });

    test("user tokens, scoped keys, the fleet token and no token are refused with 401 and create nothing", async () => {
      const u = await signup(t.app);
      const key = await scopedKey(t.app, u.token, ["*"]);
      const email = `refused-${randomUUID()}@example.com`;
      for (const token of [undefined, u.token, key, FLEET_TOKEN, `${OPERATOR_TOKEN}0`]) {
        expectError(
          await call(t.app, { method: "POST", url: "/v1/operator/accounts", token, body: { email } }),
          401,
          "auth_required",
        );
      }
      const { rows } = await t.db.query("SELECT 1 FROM accounts WHERE email = $1", [email]);
      assert.equal(rows.length, 0);
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

  describe("with SIGNUP=closed, EDITION=onprem, BASE_DOMAIN set and no FLEET_TOKEN", () => {
    let c: TestApp;
    before(async () => {
      c = await createTestApp({
        env: { SIGNUP: "closed", EDITION: "onprem", BASE_DOMAIN: "cloud.example.org", FLEET_TOKEN: "" },
      });
    });
    after(async () => {
      await c.close();
    });

    test("sign-up is 403 while the operator can still create accounts whose tokens work", async () => {
      const email = `closed-${randomUUID()}@example.com`;
      expectError(
        await call(c.app, {
          method: "POST",
          url: "/v1/auth/signup",
          body: { email, password: "long enough password" },
        }),
        403,
      );
      const res = await call(c.app, {
        method: "POST",
        url: "/v1/operator/accounts",
        token: OPERATOR_TOKEN,
        body: { email },
      });
      assert.equal(res.statusCode, 201, res.body);
      const me = await call(c.app, { url: "/v1/me", token: res.json().token });
      assert.equal(me.statusCode, 200, me.body);
      assert.equal(me.json().email, email);
      expectError(
        await call(c.app, {
          method: "POST",
          url: "/v1/auth/signup",
          body: { email: `other-${email}`, password: "long enough password" },
        }),
        403,
      );
    });

    test("/v1/edition and the manual reflect the configured edition and base domain", async () => {
      assert.deepEqual((await call(c.app, { url: "/v1/edition" })).json(), {
        edition: "onprem",
        base_domain: "cloud.example.org",
        login_method: "password",
      });
      assert.match((await call(c.app, { url: "/v1/manual?brief=1" })).body, /cloud\.example\.org/);
    });

    test("with no FLEET_TOKEN configured the fleet endpoint refuses every bearer", async () => {
      for (const token of [undefined, FLEET_TOKEN, OPERATOR_TOKEN, ""]) {
        expectError(
          await call(c.app, {
            method: "POST",
            url: "/v1/fleet/patch-report",
            token: token || undefined,
            body: { host: "h" },
          }),
          401,
          "auth_required",
        );
      }
    });
  });
});
