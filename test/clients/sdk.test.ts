import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import {
  PlatformApiError,
  PlatformNetworkError,
  buildRequest,
  coerceValue,
  createPlatformClient,
  indexOperations,
  platformFetch,
  unwrap,
  type OpenApiDocument,
} from "@hosting-platform/sdk";
import { signup, type TestApp } from "../helpers/app.js";
import { listeningApp } from "./lib.js";

type Seen = { method: string; url: string; key: string | null; body: string; auth: string | null };

/** A fetch that answers from a script and records what it was sent. */
function scripted(answers: (Response | Error)[]) {
  const seen: Seen[] = [];
  const fetch = async (req: Request) => {
    seen.push({
      method: req.method,
      url: req.url,
      key: req.headers.get("idempotency-key"),
      body: await req.text(),
      auth: req.headers.get("authorization"),
    });
    const next = answers.shift();
    if (!next) throw new Error("no more answers");
    if (next instanceof Error) throw next;
    return next;
  };
  return { seen, fetch: fetch as unknown as typeof globalThis.fetch };
}
const err = (status: number, code: string, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify({ error: { code, message: `${code}!` } }), {
    status,
    headers: { "content-type": "application/json", "x-request-id": "req-1", ...headers },
  });
const ok = (body: unknown, status = 200) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });

describe("SDK transport", () => {
  test("a POST gets one Idempotency-Key, kept across retries with the same body; Retry-After is honoured", async () => {
    const { seen, fetch } = scripted([err(503, "service_unavailable", { "retry-after": "1" }), ok({ id: "x" }, 201)]);
    const f = platformFetch({ baseUrl: "http://api.test", token: "op_u_abc", fetch });
    const started = Date.now();
    const res = await f("http://api.test/v1/databases", {
      method: "POST",
      body: JSON.stringify({ name: "db1" }),
      headers: { "content-type": "application/json" },
    });
    assert.equal(res.status, 201);
    assert.ok(Date.now() - started >= 950, "waited Retry-After");
    assert.equal(seen.length, 2);
    assert.ok(seen[0].key && seen[0].key === seen[1].key, "same key on the retry");
    assert.equal(seen[1].body, JSON.stringify({ name: "db1" }));
    assert.equal(seen[0].auth, "Bearer op_u_abc");
  });

  test("GET is retried on network errors and 502; the final failure is typed and counts its retries", async () => {
    const { seen, fetch } = scripted([
      new TypeError("fetch failed"),
      err(502, "provider_error"),
      err(502, "provider_error"),
      err(502, "provider_error"),
    ]);
    const f = platformFetch({ baseUrl: "http://api.test", fetch, retries: 3, maxRetryDelayMs: 10 });
    await assert.rejects(
      f("http://api.test/v1/databases"),
      (e: unknown) =>
        e instanceof PlatformApiError &&
        e.status === 502 &&
        e.code === "provider_error" &&
        e.retries === 3 &&
        e.requestId === "req-1",
    );
    assert.equal(seen.length, 4);
  });

  test("PATCH (no idempotency) is not retried on 503 or network errors, but is on 429, which did nothing", async () => {
    let s = scripted([err(503, "service_unavailable")]);
    await assert.rejects(
      platformFetch({ baseUrl: "http://api.test", fetch: s.fetch })("http://api.test/v1/me", {
        method: "PATCH",
        body: "{}",
      }),
      PlatformApiError,
    );
    assert.equal(s.seen.length, 1);
    s = scripted([new TypeError("fetch failed")]);
    await assert.rejects(
      platformFetch({ baseUrl: "http://api.test", fetch: s.fetch })("http://api.test/v1/me", {
        method: "PATCH",
        body: "{}",
      }),
      (e: unknown) => e instanceof PlatformNetworkError && e.retries === 0,
    );
    s = scripted([err(429, "too_many_requests", { "retry-after": "0" }), ok({})]);
    const res = await platformFetch({ baseUrl: "http://api.test", fetch: s.fetch })("http://api.test/v1/me", {
      method: "PATCH",
      body: "{}",
    });
    assert.equal(res.status, 200);
    assert.equal(s.seen.length, 2);
  });
});

describe("SDK against a real server", () => {
  let t: TestApp & { baseUrl: string };
  let token: string;
  before(async () => {
    t = await listeningApp();
    token = (await signup(t.app)).token;
  });
  after(async () => {
    await t.close();
  });

  test("typed calls; an error answer throws PlatformApiError with the catalog code", async () => {
    const client = createPlatformClient({ baseUrl: t.baseUrl, token });
    const me = await unwrap(client.api.GET("/v1/me"));
    assert.match(me.email, /@example.com$/);
    await assert.rejects(
      unwrap(client.api.GET("/v1/databases/{id}", { params: { path: { id: "no-such-db" } } })),
      (e: unknown) =>
        e instanceof PlatformApiError && e.status === 404 && e.code === "not_found" && typeof e.requestId === "string",
    );
    const anonymous = createPlatformClient({ baseUrl: t.baseUrl });
    await assert.rejects(
      unwrap(anonymous.api.GET("/v1/me")),
      (e: unknown) => e instanceof PlatformApiError && e.code === "auth_required",
    );
  });

  test("paginate walks a cursor-paged list to its end", async () => {
    const client = createPlatformClient({ baseUrl: t.baseUrl, token });
    for (let i = 0; i < 5; i++) await unwrap(client.api.PATCH("/v1/me", { body: { display_name: `name ${i}` } }));
    const items = [];
    for await (const item of client.paginate((cursor) =>
      unwrap(client.api.GET("/v1/me/audit", { params: { query: { limit: 2, cursor } } })),
    ))
      items.push(item);
    assert.ok(items.length >= 5, `${items.length} items`);
    assert.equal(new Set(items.map((i) => i.id)).size, items.length, "no item twice");
  });

  test("operations from the live document: flat fields go to path, query and body", async () => {
    const client = createPlatformClient({ baseUrl: t.baseUrl, token });
    const index = indexOperations((await client.request("GET", "/v1/openapi.json")) as OpenApiDocument);
    const create = index.byId.get("createDatabase")!;
    assert.deepEqual(buildRequest(create, { name: "abc", size: "dev" }), {
      method: "POST",
      path: "/v1/databases",
      query: {},
      body: { name: "abc", size: "dev" },
    });
    assert.equal(buildRequest(index.byId.get("getDatabase")!, { id: "a/b" }).path, "/v1/databases/a%2Fb");
    assert.deepEqual(buildRequest(index.byId.get("listMyAudit")!, { limit: 5 }).query, { limit: 5 });
    assert.throws(() => buildRequest(create, { nope: 1 }), /takes no field "nope"/);
    assert.throws(() => buildRequest(create, {}), /needs the field "name"/);
    assert.equal(coerceValue(create.inputSchema.properties.storage_gb, "20"), 20);
  });
});

test("the SDK's core imports no Node module, so it runs in browsers", () => {
  const dir = path.resolve("packages/sdk/src");
  for (const file of readdirSync(dir).filter((f) => f.endsWith(".ts"))) {
    const text = readFileSync(path.join(dir, file), "utf8");
    assert.doesNotMatch(text, /from "node:|require\(/, file);
  }
});
