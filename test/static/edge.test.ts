/**
 * Static sites through the edge, with real requests on loopback: files by path with their content types, strong
 * ETags and 304, gzip and brotli, SPA fallback, the site's 404 page or the edge's, 503 before a finalize, 405,
 * a rollback or a deletion followed within a second, and hot files served from memory.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import zlib from "node:zlib";
import { call, signup } from "../helpers/app.js";
import { within } from "../edge/lib.js";
import type { StaticFiles } from "../../src/static/contract.js";
import { createSite, deploy, get, staticApp, tarGz, zipArchive, type StaticApp } from "./lib.js";

let s: StaticApp;
let token: string;
/** content reads that reached the store, by hash */
const reads = new Map<string, number>();

const page = (title: string) => `<!doctype html><title>${title}</title>` + `<p>${title} `.repeat(200);
const appJs = `export const greet = () => "hello";\n`.repeat(100);
const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, ...Array.from({ length: 4000 }, (_, i) => i % 256)]);

before(async () => {
  s = await staticApp({}, (t) => {
    const files = t.platform.kernel.use("staticFiles")!;
    const counting: StaticFiles = {
      manifest: files.manifest,
      content: async (q, hash) => {
        reads.set(hash, (reads.get(hash) ?? 0) + 1);
        return files.content(q, hash);
      },
    };
    t.platform.kernel.replace("staticFiles", counting);
  });
  token = (await signup(s.t.app)).token;
  await createSite(s.t, token, { name: "docs", slug: "docs", not_found_page: "404.html" });
  await deploy(
    s.t,
    token,
    "docs",
    await tarGz({
      "index.html": page("home"),
      "about.html": page("about"),
      "guide/index.html": page("guide"),
      "assets/app.js": appJs,
      "assets/logo.png": png,
      "assets/small.css": "body{margin:0}",
      "hello world.txt": "spaced",
      "404.html": page("custom missing"),
    }),
  );
});
after(async () => s?.close());

test("files by path: index.html for folders, .html and /index.html for extensionless paths; content types", async () => {
  const cases: [string, string, string][] = [
    ["/", "text/html; charset=utf-8", page("home")],
    ["/index.html", "text/html; charset=utf-8", page("home")],
    ["/about", "text/html; charset=utf-8", page("about")],
    ["/about.html", "text/html; charset=utf-8", page("about")],
    ["/guide", "text/html; charset=utf-8", page("guide")],
    ["/guide/", "text/html; charset=utf-8", page("guide")],
    ["/assets/app.js?v=3", "text/javascript; charset=utf-8", appJs],
    ["/assets/small.css", "text/css; charset=utf-8", "body{margin:0}"],
    ["/hello%20world.txt", "text/plain; charset=utf-8", "spaced"],
  ];
  for (const [path, type, body] of cases) {
    const r = await get(s.port, "docs", path);
    assert.equal(r.status, 200, path);
    assert.equal(r.headers["content-type"], type, path);
    assert.equal(r.text, body, path);
    assert.equal(r.headers["x-content-type-options"], "nosniff");
  }
  const logo = await get(s.port, "docs", "/assets/logo.png", { headers: { "accept-encoding": "gzip, br" } });
  assert.equal(logo.headers["content-type"], "image/png");
  assert.equal(logo.headers["content-encoding"], undefined, "images are not compressed");
  assert.deepEqual(logo.body, png);
  assert.equal((await get(s.port, "docs", "/")).headers["cache-control"], "no-cache");
  assert.equal(
    (await get(s.port, "docs", "/assets/app.js")).headers["cache-control"],
    "public, max-age=0, must-revalidate",
  );
});

test("strong ETag from the content hash; If-None-Match answers 304 without a body; HEAD has headers only", async () => {
  const first = await get(s.port, "docs", "/assets/app.js");
  const etag = String(first.headers.etag);
  assert.match(etag, /^"[0-9a-f]{64}"$/);
  const again = await get(s.port, "docs", "/assets/app.js", { headers: { "if-none-match": etag } });
  assert.equal(again.status, 304);
  assert.equal(again.body.length, 0);
  assert.equal(again.headers.etag, etag);
  const weak = await get(s.port, "docs", "/assets/app.js", { headers: { "if-none-match": `"nope", W/${etag}` } });
  assert.equal(weak.status, 304);
  const changed = await get(s.port, "docs", "/assets/app.js", { headers: { "if-none-match": '"other"' } });
  assert.equal(changed.status, 200);
  const head = await get(s.port, "docs", "/assets/app.js", { method: "HEAD" });
  assert.equal(head.status, 200);
  assert.equal(head.body.length, 0);
  assert.equal(Number(head.headers["content-length"]), Buffer.byteLength(appJs));
});

test("gzip and brotli where the client accepts them, with Vary; small files as they are", async () => {
  const br = await get(s.port, "docs", "/assets/app.js", { headers: { "accept-encoding": "gzip, deflate, br" } });
  assert.equal(br.headers["content-encoding"], "br");
  assert.equal(br.headers.vary, "Accept-Encoding");
  assert.ok(br.body.length < Buffer.byteLength(appJs) / 5);
  assert.equal(zlib.brotliDecompressSync(br.body).toString(), appJs);
  const gz = await get(s.port, "docs", "/", { headers: { "accept-encoding": "gzip, br;q=0" } });
  assert.equal(gz.headers["content-encoding"], "gzip");
  assert.equal(zlib.gunzipSync(gz.body).toString(), page("home"));
  assert.notEqual(gz.headers.etag, br.headers.etag);
  // a compressed answer revalidates like the plain one
  const cond = await get(s.port, "docs", "/", {
    headers: { "accept-encoding": "gzip", "if-none-match": String(gz.headers.etag) },
  });
  assert.equal(cond.status, 304);
  const plain = await get(s.port, "docs", "/assets/app.js");
  assert.equal(plain.headers["content-encoding"], undefined);
  assert.equal(plain.headers.vary, "Accept-Encoding");
  const small = await get(s.port, "docs", "/assets/small.css", { headers: { "accept-encoding": "br" } });
  assert.equal(small.headers["content-encoding"], undefined);
});

test("unknown paths: the site's 404 page (404), else the edge's; SPA sites answer index.html", async () => {
  const custom = await get(s.port, "docs", "/no/such/page");
  assert.equal(custom.status, 404);
  assert.equal(custom.text, page("custom missing"));
  // nginx (EDGE_DATA_PLANE=nginx) refuses a request-target climbing above the root while parsing it: 400
  assert.equal((await get(s.port, "docs", "/../../etc/passwd")).status, s.edge.dataPlane === "nginx" ? 400 : 404);

  await createSite(s.t, token, { name: "plain", slug: "plain" });
  await deploy(s.t, token, "plain", zipArchive([{ name: "index.html", body: "plain home" }]), "application/zip");
  const edge404 = await get(s.port, "plain", "/missing");
  assert.equal(edge404.status, 404);
  assert.match(edge404.text, /This site has no page at this address/);

  await createSite(s.t, token, { name: "spa-app", slug: "spa-app", spa: true });
  await deploy(s.t, token, "spa-app", zipArchive([{ name: "index.html", body: "spa shell" }]), "application/zip");
  const route = await get(s.port, "spa-app", "/users/42/settings");
  assert.equal(route.status, 200);
  assert.equal(route.text, "spa shell");
  assert.equal((await get(s.port, "spa-app", "/missing.js")).status, 404);
});

test("503 before any finalize; 405 for other methods than GET and HEAD", async () => {
  await createSite(s.t, token, { name: "empty-site", slug: "empty-site" });
  const r = await get(s.port, "empty-site", "/");
  assert.equal(r.status, 503);
  assert.equal(r.headers["retry-after"], "5");
  const post = await get(s.port, "docs", "/", { method: "POST" });
  assert.equal(post.status, 405);
  assert.equal(post.headers.allow, "GET, HEAD");
});

test("a finalize and a rollback are served within a second; a deleted site is gone within a second", async () => {
  await createSite(s.t, token, { name: "roll", slug: "roll" });
  const v1 = await deploy(s.t, token, "roll", zipArchive([{ name: "index.html", body: "v1" }]), "application/zip");
  assert.equal((await get(s.port, "roll", "/")).text, "v1");
  await deploy(s.t, token, "roll", zipArchive([{ name: "index.html", body: "v2" }]), "application/zip");
  await within("finalize served", 1000, async () => (await get(s.port, "roll", "/")).text === "v2");
  const back = await call(s.t.app, {
    method: "POST",
    url: "/v1/static/roll/rollback",
    token,
    body: { deployment_id: v1.id },
  });
  assert.equal(back.statusCode, 200, back.body);
  await within("rollback served", 1000, async () => (await get(s.port, "roll", "/")).text === "v1");
  const del = await call(s.t.app, { method: "DELETE", url: "/v1/static/roll", token });
  assert.equal(del.statusCode, 204);
  await within("deletion followed", 1000, async () => {
    const r = await get(s.port, "roll", "/");
    return r.status === 404 && /No app or site is served at this address/.test(r.text);
  });
});

test("a hot file is read from the store once, then served from memory", async () => {
  const first = await get(s.port, "docs", "/about");
  const hash = String(first.headers.etag).replace(/"/g, "");
  for (let i = 0; i < 20; i++) assert.equal((await get(s.port, "docs", "/about")).status, 200);
  await Promise.all(
    Array.from({ length: 10 }, () => get(s.port, "docs", "/about", { headers: { "accept-encoding": "br" } })),
  );
  assert.equal(reads.get(hash), 1);
});
