/**
 * The edge's access decision: public apps pass; owner-only apps need the owner's console session cookie (a
 * signed-out session is refused at once); without one the visitor is sent to EDGE_LOGIN_URL when set. A
 * visibility the edge has no rule for is refused. A lost route listener is taken again and routes follow.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { APPS_DOMAIN, edgeApp, request, upstream, within, wsRoundTrip, type EdgeApp, type Upstream } from "./lib.js";
import { call, signup } from "../helpers/app.js";

let e: EdgeApp;
let withLogin: EdgeApp;
let u: Upstream;
let owner: { token: string; id: string };
let stranger: { token: string; id: string };

before(async () => {
  e = await edgeApp();
  withLogin = await edgeApp({ databaseUrl: e.t.url, env: { EDGE_LOGIN_URL: "http://console.edge.test/login" } });
  u = await upstream("private");
  owner = await signup(e.t.app);
  stranger = await signup(e.t.app);
  for (const app of [e, withLogin]) {
    app.source.set("mine", [u.address], { visibility: "owner-only", owner: { kind: "account", id: owner.id } });
    app.source.set("odd", [u.address], { visibility: "org-only" as never });
    app.source.set("open", [u.address]);
  }
});

after(async () => {
  await withLogin?.close();
  await e?.close();
  await u?.close();
});

const session = (token: string) => ({ cookie: `theme=dark; platform_session=${token}` });

test("public apps pass without any session", async () => {
  assert.equal((await request(e.port, `open.${APPS_DOMAIN}`)).status, 200);
});

test("owner-only: the owner's session cookie passes (and is not handed to the app); others are refused", async () => {
  const seen = u.seen.length;
  const anonymous = await request(e.port, `mine.${APPS_DOMAIN}`);
  assert.equal(anonymous.status, 401);
  assert.match(anonymous.body, /visible to its owner only/);
  assert.equal(u.seen.length, seen, "a refused request never reaches the app");

  const mine = await request(e.port, `mine.${APPS_DOMAIN}`, { headers: session(owner.token) });
  assert.equal(mine.status, 200);
  assert.equal(mine.json().headers.cookie, "theme=dark");

  const theirs = await request(e.port, `mine.${APPS_DOMAIN}`, { headers: session(stranger.token) });
  assert.equal(theirs.status, 403);
  const forged = await request(e.port, `mine.${APPS_DOMAIN}`, { headers: session("op_u_not_a_real_token") });
  assert.equal(forged.status, 401);
  // a bearer header is the app's business, not a platform session
  const bearer = await request(e.port, `mine.${APPS_DOMAIN}`, { headers: { authorization: `Bearer ${owner.token}` } });
  assert.equal(bearer.status, 401);
  // the same decision guards upgrades
  assert.equal((await wsRoundTrip(e.port, `mine.${APPS_DOMAIN}`, "x")).status, 401);
});

test("a signed-out session is refused at once, though its decision was cached", async () => {
  const { token } = (
    await call(e.t.app, {
      method: "POST",
      url: "/v1/auth/login",
      body: {
        email: (await call(e.t.app, { url: "/v1/me", token: owner.token })).json().email,
        password: "correct horse battery",
      },
    })
  ).json();
  assert.equal((await request(e.port, `mine.${APPS_DOMAIN}`, { headers: session(token) })).status, 200);
  assert.equal((await call(e.t.app, { method: "POST", url: "/v1/auth/logout", token })).statusCode, 204);
  await within("signed-out session refused", 1000, async () => {
    return (await request(e.port, `mine.${APPS_DOMAIN}`, { headers: session(token) })).status === 401;
  });
});

test("with EDGE_LOGIN_URL a visitor without a session is sent to sign in, with the address to return to", async () => {
  const r = await request(withLogin.port, `mine.${APPS_DOMAIN}:${withLogin.port}`, { path: "/page?x=1" });
  assert.equal(r.status, 302);
  const location = new URL(String(r.headers.location));
  assert.equal(location.origin + location.pathname, "http://console.edge.test/login");
  assert.equal(location.searchParams.get("next"), `http://mine.${APPS_DOMAIN}:${withLogin.port}/page?x=1`);
  // a signed-in stranger is not sent to sign in again: refused
  assert.equal(
    (await request(withLogin.port, `mine.${APPS_DOMAIN}`, { headers: session(stranger.token) })).status,
    403,
  );
});

test("a visibility without a rule at this edge is refused, never served", async () => {
  const r = await request(e.port, `odd.${APPS_DOMAIN}`, { headers: session(owner.token) });
  assert.equal(r.status, 403);
});

test("the route listener, lost, is taken again; routes keep following the store meanwhile", async () => {
  e.source.set("relisten", [u.address]);
  assert.equal((await request(e.port, `relisten.${APPS_DOMAIN}`)).status, 200);
  const { rowCount } = await e.t.db.query(
    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'edge routes' AND datname = current_database()",
  );
  assert.ok(rowCount! >= 1);
  // while it is down nothing is cached: a change shows without any NOTIFY
  e.source.answers.delete("relisten");
  await within("change seen without the listener", 1000, async () => {
    return (await request(e.port, `relisten.${APPS_DOMAIN}`)).status === 404;
  });
  // back within about a second: a NOTIFY works again
  await within("listener back", 5000, async () => {
    const { rows } = await e.t.db.query(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'edge routes' AND datname = current_database()",
    );
    return rows[0].n >= 2;
  });
  assert.equal((await request(e.port, `relisten.${APPS_DOMAIN}`)).status, 404);
  e.source.set("relisten", [u.address]);
  await e.notify("relisten");
  await within("NOTIFY after reconnect", 1000, async () => {
    return (await request(e.port, `relisten.${APPS_DOMAIN}`)).status === 200;
  });
});
