/**
 * The edge's proxy over plain node servers as upstreams: routing by Host, round robin, the edge's own pages
 * (404, 503 with Retry-After, 502), forwarding headers, the platform's cookies kept from apps, streaming
 * bodies and WebSocket upgrades.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import type { Socket } from "node:net";
import { APPS_DOMAIN, edgeApp, request, upstream, wsRoundTrip, type EdgeApp, type Upstream } from "./lib.js";
import { freePort } from "../../src/pgserver/cluster.js";

let e: EdgeApp;
let a: Upstream;
let b: Upstream;

before(async () => {
  e = await edgeApp({ env: { EDGE_UPSTREAM_TIMEOUT_MS: "500" } });
  a = await upstream("a");
  b = await upstream("b");
  e.source.set("alpha", [a.address]);
  e.source.set("beta", [b.address]);
  e.source.set("both", [a.address, b.address]);
  e.source.set("idle", []);
});

after(async () => {
  await e?.close();
  await a?.close();
  await b?.close();
});

test("the edge listens on a free port (EDGE_PORT=0) read from the area state", () => {
  assert.ok(e.port > 0);
});

test("requests go by Host: <label>.<APPS_DOMAIN>, whatever the port or case", async () => {
  const r1 = await request(e.port, `alpha.${APPS_DOMAIN}:${e.port}`, { path: "/x?y=1" });
  assert.equal(r1.status, 200);
  assert.equal(r1.json().name, "a");
  assert.equal(r1.json().url, "/x?y=1");
  const r2 = await request(e.port, `BETA.${APPS_DOMAIN.toUpperCase()}.`);
  assert.equal(r2.json().name, "b");
});

test("an unknown host is a 404 page, never an upstream", async () => {
  for (const host of [
    `nope.${APPS_DOMAIN}`,
    APPS_DOMAIN,
    `a.alpha.${APPS_DOMAIN}`,
    "alpha.elsewhere.test",
    "127.0.0.1",
    "[::1]:80",
  ]) {
    const r = await request(e.port, host);
    assert.equal(r.status, 404, host);
    assert.match(String(r.headers["content-type"]), /^text\/html/);
    assert.match(r.body, /No app or site is served at this address/);
  }
  const head = await request(e.port, `nope.${APPS_DOMAIN}`, { method: "HEAD" });
  assert.equal(head.status, 404);
  assert.equal(head.body, "");
});

test("round robin over a target's replicas", async () => {
  const names = [];
  for (let i = 0; i < 10; i++) names.push((await request(e.port, `both.${APPS_DOMAIN}`)).json().name);
  assert.equal(names.filter((n) => n === "a").length, 5, names.join());
  assert.equal(names.filter((n) => n === "b").length, 5, names.join());
  for (let i = 1; i < names.length; i++) assert.notEqual(names[i], names[i - 1], names.join());
});

test("a target without a healthy replica is 503 with Retry-After: 5", async () => {
  const r = await request(e.port, `idle.${APPS_DOMAIN}`);
  assert.equal(r.status, 503);
  assert.equal(r.headers["retry-after"], "5");
  assert.match(r.body, /no running replica/);
});

test("an upstream that is gone: 502 page, with no trace of the upstream", async () => {
  const dead = `127.0.0.1:${await freePort()}`;
  e.source.set("dead", [dead]);
  for (const method of ["GET", "POST"]) {
    const r = await request(e.port, `dead.${APPS_DOMAIN}`, { method, body: method === "POST" ? "x" : undefined });
    assert.equal(r.status, 502, method);
    assert.match(r.body, /did not answer properly/);
    assert.doesNotMatch(r.body, /127\.0\.0\.1|ECONNREFUSED|at /);
  }
});

test("a GET whose replica refuses is sent once to another replica; a request with a body is not", async () => {
  const dead = `127.0.0.1:${await freePort()}`;
  e.source.set("flaky", [dead, a.address]);
  const before = a.seen.length;
  // round robin starts on either replica: every GET is answered by a, whichever was tried first
  for (let i = 0; i < 4; i++) {
    const r = await request(e.port, `flaky.${APPS_DOMAIN}`, { path: `/get?i=${i}`, headers: { "x-test": "kept" } });
    assert.equal(r.status, 200);
    assert.equal(r.json().url, `/get?i=${i}`);
    assert.equal(r.json().headers["x-test"], "kept");
    assert.equal(r.json().body, "");
  }
  assert.equal(a.seen.length - before, 4, "each GET reached the live replica exactly once");
  // a POST is never replayed: its first pick (a replica not yet seen failing, first in round robin) refuses: 502,
  // and the live replica never sees it
  e.source.set("flaky-post", [`127.0.0.1:${await freePort()}`, a.address]);
  const posts = a.seen.length;
  const post = await request(e.port, `flaky-post.${APPS_DOMAIN}`, { method: "POST", body: "once" });
  assert.equal(post.status, 502);
  assert.equal(a.seen.length, posts);
});

test("X-Forwarded-For/Proto/Host/Port are set by the edge, replacing what the client sent", async () => {
  const r = await request(e.port, `alpha.${APPS_DOMAIN}:${e.port}`, {
    headers: { "x-forwarded-for": "6.6.6.6", "x-forwarded-host": "evil.test", forwarded: "for=6.6.6.6" },
  });
  const h = r.json().headers;
  assert.equal(h["x-forwarded-for"], "127.0.0.1");
  assert.equal(h["x-forwarded-proto"], "http");
  assert.equal(h["x-forwarded-host"], `alpha.${APPS_DOMAIN}:${e.port}`);
  assert.equal(h["x-forwarded-port"], String(e.port));
  assert.equal(h.forwarded, undefined);
  // the Host the visitor asked for reaches the app unchanged
  assert.equal(h.host, `alpha.${APPS_DOMAIN}:${e.port}`);
});

test("the platform's session cookies never reach an app, and an app cannot set them", async () => {
  const r = await request(e.port, `alpha.${APPS_DOMAIN}`, {
    path: "/set-cookie",
    headers: { cookie: "platform_session=op_u_secret; theme=dark; platform_csrf=abc" },
  });
  assert.equal(r.json().headers.cookie, "theme=dark");
  assert.deepEqual(r.headers["set-cookie"], ["app=1; Path=/"]);
  const only = await request(e.port, `alpha.${APPS_DOMAIN}`, { headers: { cookie: "platform_session=x" } });
  assert.equal(only.json().headers.cookie, undefined);
});

test("bodies stream both ways", async () => {
  // a chunked upload reaches the app whole
  const body = "z".repeat(300_000);
  const r = await request(e.port, `alpha.${APPS_DOMAIN}`, { method: "POST", body });
  assert.equal(r.json().body.length, body.length);
  // a slow answer arrives chunk by chunk, before the app has finished
  const firstChunkAt = await new Promise<{ first: number; end: number }>((resolve, reject) => {
    const started = Date.now();
    let first = 0;
    http
      .get({ port: e.port, host: "127.0.0.1", path: "/stream", headers: { host: `alpha.${APPS_DOMAIN}` } }, (res) => {
        res.on("data", () => (first ||= Date.now() - started));
        res.on("end", () => resolve({ first, end: Date.now() - started }));
      })
      .on("error", reject);
  });
  assert.ok(firstChunkAt.end - firstChunkAt.first >= 80, JSON.stringify(firstChunkAt));
});

test("keep-alive: one client connection carries many requests, upstream connections are reused", async () => {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const before = b.seen.length;
  const ports = new Set<number>();
  for (let i = 0; i < 20; i++) {
    const r = await request(e.port, `beta.${APPS_DOMAIN}`, { agent });
    assert.equal(r.status, 200);
    assert.equal(r.headers.connection, "keep-alive");
  }
  b.server.on("connection", (s) => ports.add(s.remotePort!));
  for (let i = 0; i < 5; i++) await request(e.port, `beta.${APPS_DOMAIN}`, { agent });
  agent.destroy();
  assert.equal(b.seen.length - before, 25);
  assert.ok(ports.size <= 1, `upstream connections opened for 5 sequential requests: ${ports.size}`);
});

test("WebSocket: the upgrade goes through the edge and frames echo both ways", async () => {
  const r = await wsRoundTrip(e.port, `beta.${APPS_DOMAIN}`, "hello");
  assert.deepEqual(r, { status: 101, reply: "b:hello" });
  assert.equal((await wsRoundTrip(e.port, `nope.${APPS_DOMAIN}`, "x")).status, 404);
  assert.equal((await wsRoundTrip(e.port, `idle.${APPS_DOMAIN}`, "x")).status, 503);
  assert.equal((await wsRoundTrip(e.port, `dead.${APPS_DOMAIN}`, "x")).status, 502);
});

test("an upstream silent longer than EDGE_UPSTREAM_TIMEOUT_MS: 504, and the request is not sent twice", async () => {
  const before = a.seen.length;
  const r = await request(e.port, `alpha.${APPS_DOMAIN}`, { path: "/slow" });
  assert.equal(r.status, 504);
  await new Promise((resolve) => setTimeout(resolve, 1200));
  assert.equal(a.seen.filter((s) => s.url === "/slow").length, 1);
  assert.equal(a.seen.length - before, 1);
});

test("stop: in-flight answers finish, WebSockets are cut, the port closes", async () => {
  // a WebSocket held open
  const ws = await new Promise<Socket>((resolve, reject) => {
    http
      .request({
        port: e.port,
        host: "127.0.0.1",
        headers: {
          host: `beta.${APPS_DOMAIN}`,
          connection: "Upgrade",
          upgrade: "websocket",
          "sec-websocket-version": "13",
          "sec-websocket-key": Buffer.from("0123456789abcdef").toString("base64"),
        },
      })
      .on("upgrade", (_res, socket) => resolve(socket))
      .on("error", reject)
      .end();
  });
  const wsClosed = new Promise((r) => ws.once("close", r));
  // an answer under way (three chunks over 150 ms)
  const streaming = request(e.port, `alpha.${APPS_DOMAIN}`, { path: "/stream" });
  await new Promise((r) => setTimeout(r, 30));
  const started = Date.now();
  await e.edge.stop();
  assert.ok(Date.now() - started < 3000, `stop took ${Date.now() - started} ms`);
  const answer = await streaming;
  assert.equal(answer.status, 200);
  assert.equal(answer.body, "chunk0\nchunk1\nchunk2\n");
  await wsClosed;
  await assert.rejects(request(e.port, `alpha.${APPS_DOMAIN}`), /ECONNREFUSED/);
});
