import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { OPERATOR_TOKEN, call, createTestApp, expectError, scopedKey, signup, type TestApp } from "../helpers/app.js";

describe("meta", () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(async () => {
    await t.close();
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
});
