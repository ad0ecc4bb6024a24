import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { call, signup } from "../helpers/app.js";
import { edgeApp, request, upstream, within, type EdgeApp, type Upstream } from "../edge/lib.js";
import { TestDns, uniqueDomain } from "./lib.js";

/**
 * A custom domain at the edge: unknown (404) until verified, then served by its app within a second on every edge
 * (NOTIFY domain_routes), not served while its slug names no app of the domain's owner, 404 again once deleted.
 */
describe("custom domains at the edge", () => {
  const dns = new TestDns();
  let e: EdgeApp;
  let up: Upstream;
  let alice: { token: string; id: string };
  let bob: { token: string; id: string };
  const status = async (host: string) => (await request(e.port, host)).status;

  before(async () => {
    await dns.start();
    e = await edgeApp({ env: { DNS_SERVERS: dns.address, DNS_TIMEOUT_MS: "400" } });
    up = await upstream("shop");
    alice = await signup(e.t.app);
    bob = await signup(e.t.app);
    e.source.set("shop", [up.address], { owner: { kind: "account", id: alice.id } });
  });
  after(async () => {
    await e.close();
    await up.close();
    await dns.close();
  });

  test("404 before verification, the app within a second after, 404 again after DELETE", async () => {
    const domain = uniqueDomain();
    const added = await call(e.t.app, {
      method: "POST",
      url: "/v1/apps/shop/domains",
      token: alice.token,
      body: { domain },
    });
    assert.equal(added.statusCode, 201, added.body);
    const d = added.json();
    assert.equal(await status(domain), 404, "a pending domain is not served");

    dns.add(d.verification.txt.name, "TXT", d.verification.txt.value);
    const verified = await call(e.t.app, {
      method: "POST",
      url: `/v1/apps/shop/domains/${d.id}/verify`,
      token: alice.token,
      body: {},
    });
    assert.equal(verified.json().verified, true, verified.body);
    const took = await within("served after verification", 1000, async () => (await status(domain)) === 200);
    const answer = await request(e.port, `${domain.toUpperCase()}:443`, { path: "/hello" });
    assert.equal(answer.status, 200);
    assert.equal(answer.json().name, "shop");
    assert.equal(answer.json().url, "/hello");
    assert.equal(answer.json().headers["x-forwarded-host"], `${domain.toUpperCase()}:443`);
    assert.ok(took <= 1000);

    // the app's slug held by another owner (the app deleted, the slug taken): the domain does not follow it
    e.source.set("shop", [up.address], { owner: { kind: "account", id: bob.id } });
    await e.notify();
    await within("not served for another owner's app", 1000, async () => (await status(domain)) === 404);
    // the app gone: not served, the row stays (app_exists false)
    e.source.answers.delete("shop");
    await e.notify();
    await within("not served without its app", 1000, async () => (await status(domain)) === 404);
    const listed = (await call(e.t.app, { url: "/v1/domains", token: alice.token })).json();
    assert.equal(listed.find((x: { id: string }) => x.id === d.id).app_exists, false);
    // the app back: served again
    e.source.set("shop", [up.address], { owner: { kind: "account", id: alice.id } });
    await e.notify();
    await within("served again with its app", 1000, async () => (await status(domain)) === 200);

    const deleted = await call(e.t.app, { method: "DELETE", url: `/v1/domains/${d.id}`, token: alice.token });
    assert.equal(deleted.statusCode, 204);
    await within("not served after DELETE", 1000, async () => (await status(domain)) === 404);
    // the apps domain name of the app is unaffected throughout
    assert.equal(await status("shop.apps.edge.test"), 200);
  });
});
