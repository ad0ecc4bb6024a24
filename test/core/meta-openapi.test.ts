import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { Validator } from "@seriousme/openapi-schema-validator";
import type { RouteEntry } from "../../src/http/route-table.js";
import { call, createTestApp, type TestApp } from "../helpers/app.js";
import { openApiPath } from "./meta-helpers.js";

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
});
