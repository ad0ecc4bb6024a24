/**
 * Cached access decisions in nginx (EDGE_DATA_PLANE=nginx, src/edge/README.md "Cached access decisions in nginx"):
 * once the Node edge admits a visitor of a locked app, nginx answers that visitor's requests itself; a visibility
 * change or a sign-out takes the admission away at once (the route TTL is a minute here, so only the drop can).
 * HTTPS is nginx's too.
 * Skipped where nginx with the Lua module is not installed.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import https from "node:https";
import type { TLSSocket } from "node:tls";
import { APPS_DOMAIN, edgeApp, request, upstream, within, type EdgeApp, type Upstream } from "./lib.js";
import { call, signup } from "../helpers/app.js";
import { detectNginx } from "../../src/edge/nginx/detect.js";

const skip = "missing" in detectNginx(process.env) ? "nginx with the Lua module is not installed" : false;
const host = `locked.${APPS_DOMAIN}`;

let e: EdgeApp;
let u: Upstream;
let owner: { token: string; id: string };
let stranger: { token: string; id: string };
/** requests the Node edge answered (nginx's own answers never reach it) */
let throughNode = 0;

before(async () => {
  if (skip) return;
  e = await edgeApp({ env: { EDGE_DATA_PLANE: "nginx", EDGE_ROUTE_TTL_MS: "60000" } });
  e.edge.observe = () => throughNode++;
  u = await upstream("locked");
  owner = await signup(e.t.app);
  stranger = await signup(e.t.app);
  e.source.set("locked", [u.address], { visibility: "owner-only", owner: { kind: "account", id: owner.id } });
});

after(async () => {
  await e?.close();
  await u?.close();
});

const session = (token: string) => ({ cookie: `theme=dark; platform_session=${token}` });

/** waits until nginx answers this visitor itself: a 200 the Node edge did not see */
async function admittedByNginx(token: string): Promise<void> {
  await within("the admission cached in nginx", 3000, async () => {
    const before = throughNode;
    const r = await request(e.port, host, { headers: session(token) });
    assert.equal(r.status, 200);
    return throughNode === before;
  });
}

test("an admitted visitor's requests are answered by nginx; refusals stay with the Node edge", { skip }, async () => {
  assert.equal(e.edge.dataPlane, "nginx");
  assert.equal((await request(e.port, host)).status, 401);
  await admittedByNginx(owner.token);
  const before = throughNode;
  const seen = u.seen.length;
  for (let i = 0; i < 10; i++) {
    const r = await request(e.port, host, { headers: session(owner.token) });
    assert.equal(r.status, 200);
    assert.equal(r.json().headers.cookie, "theme=dark", "the platform's cookie never reaches the app");
  }
  assert.equal(throughNode, before, "no call into the platform");
  assert.equal(u.seen.length, seen + 10);
  // another cookie, or none, is not admitted by the owner's entry
  assert.equal((await request(e.port, host, { headers: session(stranger.token) })).status, 403);
  assert.equal((await request(e.port, host, { headers: { cookie: "theme=dark" } })).status, 401);
  assert.equal(throughNode, before + 2);
});

test("a visibility change takes the admission away at once", { skip }, async () => {
  await admittedByNginx(owner.token);
  e.source.set("locked", [u.address], { visibility: "owner-only", owner: { kind: "account", id: stranger.id } });
  await e.notify();
  await within("the old owner refused", 1000, async () => {
    return (await request(e.port, host, { headers: session(owner.token) })).status === 403;
  });
  await admittedByNginx(stranger.token);
  e.source.set("locked", [u.address], { visibility: "owner-only", owner: { kind: "account", id: owner.id } });
  await e.notify();
});

test("signing out takes the admission away at once", { skip }, async () => {
  const email = (await call(e.t.app, { url: "/v1/me", token: owner.token })).json().email;
  const login = await call(e.t.app, {
    method: "POST",
    url: "/v1/auth/login",
    body: { email, password: "correct horse battery" },
  });
  const { token } = login.json();
  await admittedByNginx(token);
  assert.equal((await call(e.t.app, { method: "POST", url: "/v1/auth/logout", token })).statusCode, 204);
  await within("the signed-out session refused", 1000, async () => {
    return (await request(e.port, host, { headers: session(token) })).status === 401;
  });
});

test("EDGE_TLS_PORT is nginx's too: the fallback certificate without one, the same decisions", { skip }, async () => {
  const answer = await new Promise<{ status: number; server?: string; subject: unknown }>((resolve, reject) => {
    const req = https.request(
      { host: "127.0.0.1", port: e.edge.tlsPort!, servername: host, headers: { host }, rejectUnauthorized: false },
      (res) => {
        const subject = (res.socket as TLSSocket).getPeerCertificate().subject?.CN ?? "";
        res.resume();
        res.on("end", () => resolve({ status: res.statusCode!, server: String(res.headers.server), subject }));
      },
    );
    req.on("error", reject);
    req.end();
  });
  assert.deepEqual(answer, { status: 401, server: "nginx", subject: answer.subject });
  assert.notEqual(answer.subject, "");
});
