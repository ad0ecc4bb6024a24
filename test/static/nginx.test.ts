/**
 * Static sites answered by nginx itself (EDGE_DATA_PLANE=nginx, src/edge/README.md "Static sites in nginx"): once a
 * site's deployment is materialised and pushed, its files, 304s, compressed variants, SPA fallback and 404 page
 * never reach the Node edge, their statistics still count, and unused deployments are swept from disk.
 * Skipped where nginx with the Lua module is not installed.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import path from "node:path";
import zlib from "node:zlib";
import { call, signup } from "../helpers/app.js";
import { within } from "../edge/lib.js";
import { detectNginx } from "../../src/edge/nginx/detect.js";
import { createSite, deploy, get, staticApp, zipArchive, type StaticApp } from "./lib.js";
import { ndjsonReceiver, until } from "../drains/receivers.js";
import { drainsArea, type DrainsState } from "../../src/drains/module.js";

const skip = "missing" in detectNginx(process.env) ? "nginx with the Lua module is not installed" : false;

let s: StaticApp;
let token: string;
/** requests the Node edge answered (nginx's own answers never reach it) */
let throughNode = 0;
const js = `export const answer = () => 42;\n`.repeat(200);

before(async () => {
  if (skip) return;
  const drains = { DRAIN_POLL_MS: "200", DRAIN_SETTLE_MS: "100", DRAIN_EDGE_FLUSH_MS: "150" };
  s = await staticApp({ env: { EDGE_DATA_PLANE: "nginx", ...drains } }, (t) => {
    t.platform.state<{ observe?: () => void }>("edge").observe = () => throughNode++;
  });
  token = (await signup(s.t.app)).token;
  await createSite(s.t, token, { name: "ngx", slug: "ngx", spa: true, not_found_page: "missing.html" });
  await deploy(
    s.t,
    token,
    "ngx",
    zipArchive([
      { name: "index.html", body: "<!doctype html><p>shell" },
      { name: "app.js", body: js },
      { name: "missing.html", body: "gone" },
    ]),
    "application/zip",
  );
});
after(async () => s?.close());

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

/** waits until nginx holds the site: a request the Node edge did not see */
async function pushed(label: string): Promise<void> {
  await within(`${label} pushed to nginx`, 5000, async () => {
    const before = throughNode;
    assert.equal((await get(s.port, label, "/")).status, 200);
    return throughNode === before;
  });
}

test(
  "files, 304, br and gzip, SPA fallback and the site's 404 page come from nginx; stats count them",
  { skip },
  async () => {
    assert.equal(s.edge.dataPlane, "nginx");
    await pushed("ngx");
    const before = throughNode;
    const br = await get(s.port, "ngx", "/app.js", { headers: { "accept-encoding": "gzip, br" } });
    assert.equal(br.headers["content-encoding"], "br");
    assert.equal(br.headers.vary, "Accept-Encoding");
    assert.equal(br.headers["content-type"], "text/javascript; charset=utf-8");
    assert.equal(br.headers["x-content-type-options"], "nosniff");
    assert.equal(br.headers["cache-control"], "public, max-age=0, must-revalidate");
    assert.equal(zlib.brotliDecompressSync(br.body).toString(), js);
    const etag = String(br.headers.etag);
    assert.match(etag, /^"[0-9a-f]{64}-br"$/);
    const gz = await get(s.port, "ngx", "/app.js", { headers: { "accept-encoding": "gzip" } });
    assert.equal(zlib.gunzipSync(gz.body).toString(), js);
    const plain = await get(s.port, "ngx", "/app.js", { headers: { "if-none-match": etag } });
    assert.equal(plain.status, 304);
    assert.equal(plain.headers.etag, `${etag.slice(0, -4)}"`);
    assert.equal(plain.body.length, 0);
    const spa = await get(s.port, "ngx", "/users/7");
    assert.equal(spa.text, "<!doctype html><p>shell");
    assert.equal(spa.headers["cache-control"], "no-cache");
    const missing = await get(s.port, "ngx", "/nope.png");
    assert.equal(missing.status, 404);
    assert.equal(missing.text, "gone");
    assert.equal(throughNode, before, "nginx answered every one");
    // what nginx cannot answer as the Node edge does goes there: other methods
    assert.equal((await get(s.port, "ngx", "/", { method: "POST" })).status, 405);
    assert.equal(throughNode, before + 1);

    await s.edge.stats.flush();
    const res = await call(s.t.app, { method: "GET", url: "/v1/static/ngx/stats", token });
    const { totals } = res.json();
    // the first request(s) of pushed() and the POST went through Node, the rest through nginx: all counted
    assert.ok(totals.requests >= 7, JSON.stringify(totals));
    assert.ok(totals.errors_4xx >= 2, JSON.stringify(totals));
  },
);

test("a new deployment is served at once; the old one leaves the disk once unused", { skip }, async () => {
  const dir = path.join(s.t.config.dataDir, "edge-static");
  const first = (await call(s.t.app, { method: "GET", url: "/v1/static/ngx", token })).json();
  const old = String(first.live_deployment_id);
  const jsBlob = path.join(dir, "blobs", sha256(js).slice(0, 2), sha256(js));
  assert.ok(existsSync(jsBlob) && existsSync(`${jsBlob}.br`) && existsSync(`${jsBlob}.gz`));
  assert.ok(existsSync(path.join(dir, "deployments", old)), "materialised");
  await deploy(s.t, token, "ngx", zipArchive([{ name: "index.html", body: "second" }]), "application/zip");
  await within("the new deployment served", 1000, async () => (await get(s.port, "ngx", "/")).text === "second");
  await pushed("ngx");
  const plane = s.edge.staticPlane!;
  await plane.sweep(Date.now() + 11 * 60_000);
  assert.ok(!existsSync(path.join(dir, "deployments", old)), "the old index swept");
  assert.ok(!existsSync(jsBlob) && !existsSync(`${jsBlob}.br`), "and the blobs only it named");
  assert.equal((await get(s.port, "ngx", "/")).text, "second");
  assert.equal((await get(s.port, "ngx", "/app.js")).status, 404);
});

test(
  "a site with a log drain of access lines is answered by the Node edge, so its lines reach the drain",
  { skip },
  async () => {
    await pushed("ngx");
    const rx = await ndjsonReceiver();
    // the drains area runs as in a platform process with the edge and worker roles (its collector and shipper)
    const drains = s.t.platform.state<DrainsState>("drains");
    await drainsArea.start!(s.t.platform, drains);
    try {
      const site = (await call(s.t.app, { url: "/v1/static/ngx", token })).json();
      const made = await call(s.t.app, {
        method: "POST",
        url: "/v1/log-drains",
        token,
        body: { name: "site-access", destination: rx.url, source: "edge", app: site.id },
      });
      assert.equal(made.statusCode, 201, made.body);
      // the edge reads the subscriptions on its next flush; then nginx lets go of the site
      await within("the site answered by the Node edge again", 5000, async () => {
        const before = throughNode;
        assert.equal((await get(s.port, "ngx", "/")).status, 200);
        return throughNode > before;
      });
      for (let i = 0; i < 3; i++) assert.equal((await get(s.port, "ngx", `/?probe=${i}`)).status, 200);
      await until(
        "the site's access lines",
        () => rx.lines().filter((l) => /probe=/.test(l.path)),
        (lines) => lines.length >= 3,
        20_000,
      );
      const line = rx.lines().find((l) => l.path === "/?probe=0");
      assert.equal(line.app_id, site.id);
      assert.equal(line.status, 200);
    } finally {
      await drainsArea.stop!(s.t.platform, drains);
      await rx.close();
    }
  },
);
