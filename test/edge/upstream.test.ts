/**
 * The edge's upstream half (undici pools, src/edge/upstream.ts and attempt.ts) against node servers built here:
 * answer headers as the visitor gets them, large bodies both ways, an upload slower than the upstream timeout, a
 * visitor leaving mid-answer, an upstream dying mid-answer, and the pools of upstreams that went away.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import net, { type AddressInfo } from "node:net";
import { APPS_DOMAIN, edgeApp, request, upstream, type EdgeApp, type Upstream } from "./lib.js";
import type { EdgeProxy } from "../../src/edge/proxy.js";

let e: EdgeApp;
/** the Node edge's own pools are looked at: an edge without nginx in front (EDGE_DATA_PLANE=node) */
let nodeEdge: EdgeApp;
let a: Upstream;
let special: http.Server;
let specialAddress: string;
/** what the special upstream saw: urls, and the urls whose answer was cut before it ended */
const cut: string[] = [];

before(async () => {
  e = await edgeApp({ env: { EDGE_UPSTREAM_TIMEOUT_MS: "500" } });
  nodeEdge = await edgeApp({ databaseUrl: e.t.url, env: { EDGE_UPSTREAM_TIMEOUT_MS: "500", EDGE_DATA_PLANE: "node" } });
  a = await upstream("a");
  special = http.createServer((req, res) => {
    res.once("close", () => {
      if (!res.writableFinished) cut.push(req.url!);
    });
    if (req.url === "/headers") {
      res.writeHead(201, "Made Here", [
        ["x-one", "1"],
        ["x-multi", "a"],
        ["x-multi", "b"],
        ["keep-alive", "timeout=5"],
        ["x-private", "hop"],
        ["connection", "x-private"],
        ["set-cookie", "app=1"],
        ["set-cookie", "platform_csrf=evil"],
      ]);
      return void res.end("made");
    }
    if (req.url === "/big") {
      // 4 MiB in 64 KiB chunks, written as the socket takes them
      const chunk = Buffer.alloc(64 * 1024, 120);
      let left = 64;
      const pump = () => {
        while (left > 0) if (left-- && !res.write(chunk)) return void res.once("drain", pump);
        res.end();
      };
      res.writeHead(200, { "content-type": "application/octet-stream" });
      return pump();
    }
    if (req.url === "/forever") {
      res.writeHead(200, { "content-type": "text/plain" });
      const tick = setInterval(() => res.write("tick\n"), 20);
      return void res.once("close", () => clearInterval(tick));
    }
    if (req.url === "/die") {
      res.writeHead(200, { "content-type": "text/plain", "content-length": "1000" });
      res.write("partial");
      return void setTimeout(() => req.socket.destroy(), 50);
    }
    // anything else: the request body's size, once it arrived
    let size = 0;
    req.on("data", (c: Buffer) => (size += c.length));
    req.on("end", () => res.end(JSON.stringify({ size, te: req.headers["transfer-encoding"] ?? null })));
  });
  await new Promise<void>((r) => special.listen(0, "127.0.0.1", () => r()));
  specialAddress = `127.0.0.1:${(special.address() as AddressInfo).port}`;
  e.source.set("alpha", [a.address]);
  nodeEdge.source.set("alpha", [a.address]);
  e.source.set("special", [specialAddress]);
});

after(async () => {
  special?.closeAllConnections();
  special?.close();
  await nodeEdge?.close();
  await e?.close();
  await a?.close();
});

const proxyOf = (app: EdgeApp) => (app.edge as unknown as { proxy: EdgeProxy }).proxy;

test("answer headers: status and reason, repeated headers kept, hop-by-hop and the platform's cookies dropped", async () => {
  const res = await new Promise<http.IncomingMessage & { text: string }>((resolve, reject) => {
    http
      .get({ port: e.port, host: "127.0.0.1", path: "/headers", headers: { host: `special.${APPS_DOMAIN}` } }, (r) => {
        let text = "";
        r.on("data", (c) => (text += c));
        r.on("end", () => resolve(Object.assign(r, { text })));
      })
      .on("error", reject);
  });
  assert.equal(res.statusCode, 201);
  assert.equal(res.statusMessage, "Made Here");
  assert.equal(res.text, "made");
  assert.equal(res.headers["x-one"], "1");
  assert.equal(res.headers["x-multi"], "a, b");
  assert.equal(res.headers["x-private"], undefined, "a header the upstream's Connection names stays on its hop");
  assert.equal(res.headers["keep-alive"], undefined);
  assert.deepEqual(res.headers["set-cookie"], ["app=1"]);
});

test("large bodies stream both ways, on one keep-alive connection of the visitor's", async () => {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const host = `special.${APPS_DOMAIN}`;
  // an upload of 8 MiB, chunked, then one with a content-length
  const body = "u".repeat(8 * 1024 * 1024);
  const chunked = await request(e.port, host, {
    method: "POST",
    path: "/up",
    body,
    agent,
    headers: { "transfer-encoding": "chunked" },
  });
  assert.deepEqual(chunked.json(), { size: body.length, te: "chunked" });
  const sized = await request(e.port, host, {
    method: "PUT",
    path: "/up",
    body,
    agent,
    headers: { "content-length": String(body.length) },
  });
  assert.deepEqual(sized.json(), { size: body.length, te: null });
  // a download of 4 MiB read slowly: the upstream is paused meanwhile, nothing is lost
  const got = await new Promise<number>((resolve, reject) => {
    http
      .get({ port: e.port, host: "127.0.0.1", path: "/big", headers: { host }, agent }, (r) => {
        let n = 0;
        r.on("data", (c: Buffer) => {
          n += c.length;
          r.pause();
          setTimeout(() => r.resume(), 1);
        });
        r.on("end", () => resolve(n));
      })
      .on("error", reject);
  });
  assert.equal(got, 4 * 1024 * 1024);
  agent.destroy();
});

test("HEAD, Expect: 100-continue, and an HTTP/1.0 visitor of a chunked answer", async () => {
  const head = await request(e.port, `alpha.${APPS_DOMAIN}`, { method: "HEAD" });
  assert.equal(head.status, 200);
  assert.equal(head.body, "");
  assert.equal(head.headers["x-upstream"], "a");
  // node answers the 100 itself; the upstream gets the body without the expectation
  const expected = await new Promise<string>((resolve, reject) => {
    const req = http.request({
      port: e.port,
      host: "127.0.0.1",
      method: "PUT",
      path: "/expect",
      headers: { host: `special.${APPS_DOMAIN}`, expect: "100-continue", "content-length": "5" },
    });
    req.on("continue", () => req.end("12345"));
    req.on("response", (r) => {
      let text = "";
      r.on("data", (c) => (text += c));
      r.on("end", () => resolve(`${r.statusCode} ${text}`));
    });
    req.on("error", reject);
  });
  assert.equal(expected, `200 ${JSON.stringify({ size: 5, te: null })}`);
  // HTTP/1.0 knows no chunks: the answer ends with the connection
  const socket = net.connect(e.port, "127.0.0.1");
  socket.write(`GET /stream HTTP/1.0\r\nHost: alpha.${APPS_DOMAIN}\r\n\r\n`);
  let raw = "";
  socket.on("data", (d) => (raw += d));
  await new Promise((r) => socket.once("close", r));
  assert.match(raw, /^HTTP\/1\.1 200/);
  assert.match(raw, /\r\nconnection: close\r\n/i);
  assert.doesNotMatch(raw, /transfer-encoding/i);
  assert.ok(raw.endsWith("\r\n\r\nchunk0\nchunk1\nchunk2\n"), JSON.stringify(raw));
});

test("an upload slower than EDGE_UPSTREAM_TIMEOUT_MS is no timeout: the upstream is timed once it has the body", async () => {
  const answer = await new Promise<string>((resolve, reject) => {
    const req = http.request(
      {
        port: e.port,
        host: "127.0.0.1",
        method: "POST",
        path: "/slow-up",
        headers: { host: `special.${APPS_DOMAIN}` },
      },
      (r) => {
        let text = "";
        r.on("data", (c) => (text += c));
        r.on("end", () => resolve(`${r.statusCode} ${text}`));
      },
    );
    req.on("error", reject);
    let n = 0;
    const tick = setInterval(() => {
      req.write("x".repeat(100));
      if (++n === 12) {
        clearInterval(tick);
        req.end();
      }
    }, 150); // 1.8 s in all, over three times the timeout
  });
  assert.equal(answer, `200 ${JSON.stringify({ size: 1200, te: "chunked" })}`);
  // once it has the body, a silent upstream is timed out as any
  const slow = await request(e.port, `alpha.${APPS_DOMAIN}`, { method: "POST", path: "/slow", body: "x".repeat(1000) });
  assert.equal(slow.status, 504);
});

test("a visitor leaving mid-answer: the upstream's request is cut too", async () => {
  await new Promise<void>((resolve, reject) => {
    const req = http.get(
      { port: e.port, host: "127.0.0.1", path: "/forever", headers: { host: `special.${APPS_DOMAIN}` } },
      (r) => r.once("data", () => setTimeout(() => (req.destroy(), resolve()), 60)),
    );
    req.on("error", () => {});
    req.on("timeout", () => reject(new Error("no answer")));
  });
  const deadline = Date.now() + 5000;
  while (!cut.includes("/forever") && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  assert.ok(cut.includes("/forever"), "the upstream saw its answer cut");
});

test("an upstream dying mid-answer: the visitor's answer is cut, never completed by a page", async () => {
  const socket = net.connect(e.port, "127.0.0.1");
  socket.write(`GET /die HTTP/1.1\r\nhost: special.${APPS_DOMAIN}\r\n\r\n`);
  let raw = "";
  socket.on("data", (d) => (raw += d));
  await new Promise((r) => socket.once("close", r));
  assert.match(raw, /^HTTP\/1\.1 200/);
  assert.match(raw, /partial/);
  assert.doesNotMatch(raw, /did not answer properly|HTTP\/1\.1 502/);
});

test("pools: one per upstream address, closed once unused for a sweep, made again when needed", async () => {
  const e = nodeEdge;
  const proxy = proxyOf(e);
  const gone = await upstream("gone");
  e.source.set("gone", [gone.address]);
  assert.equal((await request(e.port, `gone.${APPS_DOMAIN}`)).json().name, "gone");
  assert.ok(proxy.upstreamPools.includes(gone.address));
  // the replica goes away (a rolling update moved the app): a GET finds its pool's connection closed, then refused
  await gone.close();
  assert.equal((await request(e.port, `gone.${APPS_DOMAIN}`)).status, 502);
  e.source.set("gone", [a.address]);
  await e.notify();
  // used since the last sweep: kept; unused for a whole sweep: closed and forgotten, the others stay
  proxy.sweepPools();
  assert.ok(proxy.upstreamPools.includes(gone.address));
  for (let i = 0; i < 100 && (await request(e.port, `gone.${APPS_DOMAIN}`)).json().name !== "a"; i++)
    await new Promise((r) => setTimeout(r, 50));
  // the first of those requests may still have tried the gone replica (a route cached before the change arrived,
  // then refreshed by the retry): one more sweep interval in which only "a" is used
  proxy.sweepPools();
  assert.equal((await request(e.port, `gone.${APPS_DOMAIN}`)).json().name, "a");
  proxy.sweepPools();
  assert.ok(!proxy.upstreamPools.includes(gone.address), proxy.upstreamPools.join());
  assert.ok(proxy.upstreamPools.includes(a.address));
  // a pool swept while unused is made again on the next request
  proxy.sweepPools();
  proxy.sweepPools();
  assert.ok(!proxy.upstreamPools.includes(a.address));
  assert.equal((await request(e.port, `alpha.${APPS_DOMAIN}`)).json().name, "a");
  assert.ok(proxy.upstreamPools.includes(a.address));
});
