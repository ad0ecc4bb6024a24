import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import type { RouteEntry } from "../../src/http/route-table.js";
import { ERROR_CATALOG } from "../../src/http/errors.js";
import { call, createTestApp, expectError, type TestApp } from "../helpers/app.js";
import { HANGUL, manualLine, operatorOnly } from "./meta-helpers.js";

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
});
