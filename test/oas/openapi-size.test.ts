/**
 * Issue 25: the OpenAPI document states repeated schemas once (components.schemas) and error answers once
 * (components.responses), so it stays under 1 MB; nothing is lost, as inlining the shared schemas gives back the
 * document the routes declare.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { shareBodySchemas } from "../../src/http/openapi-schemas.js";
import { inlineSchemaRefs } from "../../packages/sdk/src/operations.js";
import { call, createTestApp, type TestApp } from "../helpers/app.js";

const refsIn = (x: unknown, out: string[] = []): string[] => {
  if (Array.isArray(x)) x.forEach((y) => refsIn(y, out));
  else if (x && typeof x === "object") {
    const ref = (x as { $ref?: unknown }).$ref;
    if (typeof ref === "string") out.push(ref);
    else Object.values(x).forEach((y) => refsIn(y, out));
  }
  return out;
};

describe("the OpenAPI document's shared components", () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(async () => {
    await t.close();
  });

  test("the served document is under 1 MB, and every reference resolves", async () => {
    const res = await call(t.app, { url: "/v1/openapi.json" });
    assert.ok(res.body.length < 1_000_000, `the document has ${res.body.length} bytes`);
    const doc = res.json();
    const refs = refsIn(doc);
    for (const ref of new Set(refs)) {
      const [, , kind, name] = ref.split("/");
      assert.ok(doc.components[kind]?.[name], `${ref} resolves`);
    }
    // a shared schema stands where two or more schemas stood (one used once goes back in place)
    for (const name of Object.keys(doc.components.schemas)) {
      const uses = refs.filter((r) => r === `#/components/schemas/${name}`).length;
      assert.ok(uses >= 2, `${name} is referenced ${uses} time(s)`);
    }
  });

  test("sharing loses nothing: inlined again, every body is what it was, nested repeats included", () => {
    const part = { type: "object", properties: { a: { type: "string", description: "x".repeat(200) } } };
    const view = { type: "object", properties: { part, list: { type: "array", items: part } } };
    const body = (schema: unknown) => ({ content: { "application/json": { schema } } });
    const original = {
      paths: {
        "/v1/a": { get: { operationId: "getA", responses: { "200": body(view), "404": { $ref: "#/x" } } } },
        "/v1/b": { post: { operationId: "makeB", requestBody: body(part), responses: { "201": body(view) } } },
        "/v1/c": { get: { operationId: "getC", responses: { "200": body({ type: "string" }) } } },
      },
    };
    const doc = structuredClone(original) as typeof original & { components?: Record<string, Record<string, unknown>> };
    shareBodySchemas(doc);
    const names = Object.keys(doc.components?.schemas ?? {});
    assert.deepEqual(names.map((n) => n.replace(/_[0-9a-f]{8}$/, "")).sort(), ["GetA200", "Part"]);
    assert.deepEqual(doc.paths["/v1/a"].get.responses["404"], { $ref: "#/x" }, "error references stay");
    assert.deepEqual((inlineSchemaRefs(doc as never) as typeof doc).paths, original.paths);
  });
});
