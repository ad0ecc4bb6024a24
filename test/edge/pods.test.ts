/**
 * The edge in front of real pods (podman containers created through the API), on loopback: routing by the Host
 * header to two pods, a WebSocket echoed through a pod, and a stopped pod's 503 with Retry-After. (The rolling
 * update under continuous traffic is test/apps/rolling-update.test.ts.)
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import http from "node:http";
import { call, signup, type TestApp } from "../helpers/app.js";
import { testImage } from "../helpers/images.js";
import type { Edge } from "../../src/edge/module.js";
import { createAppsTestApp, createPod, waitPod } from "../apps/lib.js";
import { request } from "./lib.js";
import { buildWsEchoImage, OP, WsClient } from "./ws-echo.js";

const DOMAIN = "apps.edgepods.test";

let t: TestApp;
let user: { token: string; id: string };
let port: number;
let one: { id: string; slug: string };
let two: { id: string; slug: string };
let echo: { id: string; slug: string };

before(async () => {
  const [v1, v2, ws] = await Promise.all([
    testImage("TEST_IMAGE_HTTPD_V1"),
    testImage("TEST_IMAGE_HTTPD_V2"),
    buildWsEchoImage(),
  ]);
  t = await createAppsTestApp({ env: { APPS_DOMAIN: DOMAIN } });
  user = await signup(t.app);
  port = t.platform.state<Edge>("edge").port!;
  [one, two, echo] = await Promise.all([
    createPod(t, user.token, { name: "edge-one", image: v1, port: 8080 }),
    createPod(t, user.token, { name: "edge-two", image: v2, port: 8080 }),
    createPod(t, user.token, { name: "edge-echo", image: ws, port: 8080 }),
  ]);
  await Promise.all([one, two, echo].map((p) => waitPod(t, user.token, p.id, (x) => x.state === "running")));
  // running is in the store; the edge follows its NOTIFY within milliseconds
  for (const p of [one, two, echo])
    await until(`${p.slug} answers`, 3000, async () => (await get(p.slug)).status === 200);
});

after(async () => {
  if (!t) return;
  for (const p of (await call(t.app, { url: "/v1/pods", token: user.token })).json())
    await call(t.app, { method: "DELETE", url: `/v1/pods/${p.id}`, token: user.token });
  await new Promise((r) => setTimeout(r, 1500));
  await t.close();
});

const get = (slug: string, opts: Parameters<typeof request>[2] = {}) => request(port, `${slug}.${DOMAIN}`, opts);

async function until(what: string, ms: number, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

test("the Host header picks the pod: <slug>.<APPS_DOMAIN>, whatever the case, port or trailing dot", async () => {
  const answers = await Promise.all([
    request(port, `${one.slug}.${DOMAIN}`),
    request(port, `${two.slug}.${DOMAIN}`),
    request(port, `${one.slug.toUpperCase()}.${DOMAIN.toUpperCase()}:${port}`),
    request(port, `${two.slug}.${DOMAIN}.`),
    request(port, `${two.slug}.${DOMAIN}:80`),
  ]);
  assert.deepEqual(
    answers.map((a) => `${a.status} ${a.body.trim()}`),
    ["200 v1", "200 v2", "200 v1", "200 v2", "200 v2"],
  );
  // interleaved on one keep-alive connection of the visitor's, each request routed on its own
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const bodies = [];
  for (let i = 0; i < 6; i++) bodies.push((await get(i % 2 ? two.slug : one.slug, { agent })).body.trim());
  agent.destroy();
  assert.deepEqual(bodies, ["v1", "v2", "v1", "v2", "v1", "v2"]);
  // HEAD: the pod's headers, no body
  const head = await get(one.slug, { method: "HEAD" });
  assert.equal(head.status, 200);
  assert.equal(head.body, "");
  // names that are not a pod: the edge's 404 page, never one of the pods
  for (const host of [`nope.${DOMAIN}`, DOMAIN, `x.${one.slug}.${DOMAIN}`, `${one.slug}.elsewhere.test`]) {
    const r = await request(port, host);
    assert.equal(r.status, 404, host);
    assert.match(r.body, /No app or site is served at this address/, host);
  }
});

test("a WebSocket through the edge to a pod: handshake forwarded, frames echoed both ways, close answered", async () => {
  // the pod's plain HTTP side, through the edge
  const plain = await get(echo.slug);
  assert.deepEqual([plain.status, plain.body], [200, `ws-echo ${echo.slug}.${DOMAIN}\n`]);

  const opened = await WsClient.open(port, `${echo.slug}.${DOMAIN}`, "/chat?room=1");
  assert.equal(opened.status, 101);
  const ws = opened.client!;
  try {
    // server → client first, unasked: the handshake as the pod saw it (Host kept, forwarding headers the edge's)
    const hello = await ws.next();
    assert.equal(hello.opcode, OP.text);
    assert.deepEqual(JSON.parse(hello.payload.toString()), {
      hello: true,
      host: `${echo.slug}.${DOMAIN}`,
      url: "/chat?room=1",
      xff: "127.0.0.1",
      xfh: `${echo.slug}.${DOMAIN}`,
      xfp: "http",
    });
    // client → server → client: a text frame, a ping, frames of every length encoding, many in flight at once
    ws.send(OP.text, "hello through the edge");
    assert.deepEqual(await ws.next(), { opcode: OP.text, payload: Buffer.from("hello through the edge") });
    ws.send(OP.ping, "are you there");
    assert.deepEqual(await ws.next(), { opcode: OP.pong, payload: Buffer.from("are you there") });
    const sent = [randomBytes(125), randomBytes(126), randomBytes(65_535), randomBytes(300_000), randomBytes(1)];
    for (const b of sent) ws.send(OP.binary, b);
    for (const b of sent) {
      const f = await ws.next();
      assert.equal(f.opcode, OP.binary);
      assert.ok(f.payload.equals(b), `a ${b.length}-byte frame came back changed (${f.payload.length} bytes)`);
    }
    const texts = Array.from({ length: 50 }, (_, i) => `message ${i} ${"é".repeat(i)}`);
    for (const s of texts) ws.send(OP.text, s);
    const echoed = [];
    for (let i = 0; i < texts.length; i++) echoed.push((await ws.next()).payload.toString());
    assert.deepEqual(echoed, texts);
    // the close handshake: the pod answers the close frame and the connection ends through the edge
    const status = Buffer.alloc(2);
    status.writeUInt16BE(1000);
    ws.send(OP.close, status);
    assert.deepEqual(await ws.next(), { opcode: OP.close, payload: status });
    await Promise.race([
      ws.closed,
      new Promise((_, reject) => setTimeout(() => reject(new Error("not closed within 5 s")), 5000)),
    ]);
  } finally {
    ws.destroy();
  }
  // and an upgrade for a name that is no pod is the edge's 404, never an upgrade
  assert.equal((await WsClient.open(port, `nope.${DOMAIN}`)).status, 404);
});

test("a stopped pod: 503 with Retry-After (HTTP and WebSocket), and served again once started", async () => {
  const stop = await call(t.app, { method: "POST", url: `/v1/pods/${echo.id}/stop`, token: user.token });
  assert.equal(stop.statusCode, 202, stop.body);
  await waitPod(t, user.token, echo.id, (p) => p.state === "stopped");
  // the store says stopped: every edge has it within a second
  await until("503 after the stop", 1000, async () => (await get(echo.slug)).status === 503);
  const r = await get(echo.slug);
  assert.equal(r.status, 503);
  assert.equal(r.headers["retry-after"], "5");
  assert.equal(r.headers["cache-control"], "no-store");
  assert.match(String(r.headers["content-type"]), /^text\/html/);
  assert.match(r.body, /no running replica/);
  assert.doesNotMatch(r.body, /127\.0\.0\.1|:\d{4,5}\b/);
  const up = await WsClient.open(port, `${echo.slug}.${DOMAIN}`);
  assert.equal(up.status, 503);
  assert.equal(up.headers["retry-after"], "5");
  // the other pods are untouched
  assert.equal((await get(one.slug)).body, "v1\n");

  const start = await call(t.app, { method: "POST", url: `/v1/pods/${echo.id}/start`, token: user.token });
  assert.equal(start.statusCode, 202, start.body);
  await waitPod(t, user.token, echo.id, (p) => p.state === "running");
  await until("served after the start", 2000, async () => (await get(echo.slug)).status === 200);
  assert.equal((await get(echo.slug)).body, `ws-echo ${echo.slug}.${DOMAIN}\n`);
});
