/**
 * The SDK's generated files match the routes: this app's /v1/openapi.json, rendered as
 * `npm run sdk:generate` renders it, must equal the checked-in packages/sdk files byte for byte.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { renderSdkFiles, SDK_DIR } from "../../packages/sdk/scripts/render.js";
import { call, createTestApp, type TestApp } from "../helpers/app.js";

describe("generated SDK", () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(async () => {
    await t.close();
  });

  test("packages/sdk/openapi.json and src/schema.d.ts are regenerated from the current routes", async () => {
    const doc = (await call(t.app, { url: "/v1/openapi.json" })).json();
    const files = await renderSdkFiles(doc);
    for (const [name, fresh] of Object.entries(files)) {
      const checkedIn = await readFile(path.join(SDK_DIR, name), "utf8").catch(() => "");
      if (checkedIn !== fresh) {
        const a = checkedIn.split("\n");
        const b = fresh.split("\n");
        const line = a.findIndex((l, i) => l !== b[i]);
        assert.fail(
          `packages/sdk/${name} is stale: run \`npm run sdk:generate\` and commit the result (first difference at line ${line + 1}: ${JSON.stringify(a[line]?.slice(0, 120))} vs ${JSON.stringify(b[line]?.slice(0, 120))})`,
        );
      }
    }
  });
});
