import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { call, expectError, scopedKey, type TestApp } from "../helpers/app.js";
import {
  addDomain,
  APPS_DOMAIN,
  audited,
  BASE_DOMAIN,
  domainsApp,
  TestDns,
  type TestApps,
  uniqueDomain,
  user,
  verify,
} from "./lib.js";

/** Every custom-domain route and error through HTTP: add, list, delete, the platform-wide claim, owners, scopes. */
describe("custom domains: routes, owners, scopes", () => {
  const dns = new TestDns();
  let t: TestApp;
  let apps: TestApps;
  let notify: () => Promise<void>;
  let alice: { token: string; id: string };
  let bob: { token: string; id: string };
  const del = (token: string, url: string) => call(t.app, { method: "DELETE", url, token });
  const get = (token: string, url: string) => call(t.app, { url, token });

  before(async () => {
    await dns.start();
    ({ t, apps, notify } = await domainsApp(dns));
    alice = await user(t);
    bob = await user(t);
    apps.set("alice-web", alice.id);
    apps.set("alice-api", alice.id, [], "group");
    apps.set("bob-site", bob.id, [], "site");
  });
  after(async () => {
    await t.close();
    await dns.close();
  });

  test("add answers 201 pending with both verification records; the app and the account lists show it", async () => {
    const name = uniqueDomain();
    const res = await addDomain(t, alice.token, "alice-web", `  ${name.toUpperCase()}. `);
    assert.equal(res.statusCode, 201, res.body);
    const d = res.json();
    assert.equal(d.domain, name);
    assert.deepEqual(d.app, { kind: "pod", slug: "alice-web" });
    assert.equal(d.status, "pending");
    assert.equal(d.app_exists, true);
    assert.equal(d.verified_at, null);
    assert.equal(d.verification.txt.name, `_platform-verify.${name}`);
    assert.match(d.verification.txt.value, /^[0-9a-f]{40}$/);
    assert.deepEqual(d.verification.cname, { name, value: `alice-web.${APPS_DOMAIN}` });

    const listed = (await get(alice.token, "/v1/apps/alice-web/domains")).json();
    assert.deepEqual(
      listed.map((x: { id: string }) => x.id),
      [d.id],
    );
    assert.deepEqual((await get(alice.token, "/v1/apps/alice-api/domains")).json(), []);
    const all = (await get(alice.token, "/v1/domains")).json();
    assert.ok(all.some((x: { id: string; app_exists: boolean }) => x.id === d.id && x.app_exists));
    assert.deepEqual((await get(bob.token, "/v1/domains")).json(), []);
    assert.deepEqual(await audited(t, "addAppDomain"), [{ target: "alice-web", status: 201 }]);

    // an internationalized name is stored in its xn-- form; a group and a site take domains the same way
    const idn = await addDomain(t, alice.token, "alice-api", `bücher-${Date.now()}.example.de`);
    assert.equal(idn.statusCode, 201, idn.body);
    assert.match(idn.json().domain, /^xn--bcher-.*\.example\.de$/);
    assert.deepEqual(idn.json().app, { kind: "group", slug: "alice-api" });
    const site = await addDomain(t, bob.token, "bob-site", uniqueDomain("blog"));
    assert.deepEqual(site.json().app, { kind: "site", slug: "bob-site" });
  });

  test("one domain belongs to one app platform-wide: 409 domain_taken for the same or another owner", async () => {
    const name = uniqueDomain();
    assert.equal((await addDomain(t, alice.token, "alice-web", name)).statusCode, 201);
    const again = await addDomain(t, alice.token, "alice-api", name.toUpperCase());
    expectError(again, 409, "domain_taken");
    assert.match(again.json().error.message, /your app alice-web/);
    const theirs = await addDomain(t, bob.token, "bob-site", name);
    expectError(theirs, 409, "domain_taken");
    assert.match(theirs.json().error.message, /another account/);
    assert.doesNotMatch(theirs.json().error.message, /alice/);
  });

  test("names that are not a custom domain are refused with 400 invalid_request", async () => {
    for (const bad of [
      "localhost",
      "192.168.0.1",
      "[::1]",
      "*.example.com",
      "under_score.example.com",
      `x.${APPS_DOMAIN}`,
      APPS_DOMAIN,
      `console.${BASE_DOMAIN}`,
      "a..example.com",
      `${"a".repeat(64)}.example.com`,
      "example.123",
    ]) {
      const res = await addDomain(t, alice.token, "alice-web", bad);
      expectError(res, 400, "invalid_request");
      assert.match(res.json().error.message, /^domain: /, bad);
    }
    expectError(await addDomain(t, alice.token, "alice-web", ""), 400, "invalid_request");
    const extra = await call(t.app, {
      method: "POST",
      url: "/v1/apps/alice-web/domains",
      token: alice.token,
      body: { domain: uniqueDomain(), app: "x" },
    });
    expectError(extra, 400, "invalid_request");
  });

  test("another owner's app, an unknown app, another app's domain: 404", async () => {
    const mine = (await addDomain(t, alice.token, "alice-web", uniqueDomain())).json();
    expectError(await addDomain(t, bob.token, "alice-web", uniqueDomain()), 404, "not_found");
    expectError(await get(bob.token, "/v1/apps/alice-web/domains"), 404, "not_found");
    expectError(await addDomain(t, alice.token, "no-such-app", uniqueDomain()), 404, "not_found");
    for (const url of [
      `/v1/apps/alice-web/domains/${mine.id}/dns-provider`,
      `/v1/apps/bob-site/domains/${mine.id}/dns-provider`,
    ])
      expectError(await get(bob.token, url), 404, "not_found");
    expectError(await verify(t, bob.token, "alice-web", mine.id), 404, "not_found");
    expectError(await del(bob.token, `/v1/apps/alice-web/domains/${mine.id}`), 404, "not_found");
    expectError(await del(bob.token, `/v1/domains/${mine.id}`), 404, "not_found");
    // the domain is alice-web's, not alice-api's
    expectError(await del(alice.token, `/v1/apps/alice-api/domains/${mine.id}`), 404, "not_found");
    expectError(await verify(t, alice.token, "alice-api", mine.id), 404, "not_found");
    assert.equal((await get(alice.token, "/v1/apps/alice-web/domains")).statusCode, 200);
  });

  test("delete by app route (by id or name), and /v1/domains/{id} with orphan_only", async () => {
    const one = (await addDomain(t, alice.token, "alice-web", uniqueDomain())).json();
    const two = (await addDomain(t, alice.token, "alice-web", uniqueDomain())).json();
    const byName = await del(alice.token, `/v1/apps/alice-web/domains/${one.domain}`);
    assert.equal(byName.statusCode, 204, byName.body);
    expectError(await del(alice.token, `/v1/apps/alice-web/domains/${one.id}`), 404, "not_found");

    // while the app exists, orphan_only refuses; without it, the domain goes
    const refused = await del(alice.token, `/v1/domains/${two.id}?orphan_only=1`);
    expectError(refused, 409, "domain_in_use");
    assert.match(refused.json().error.message, /alice-web/);
    assert.deepEqual((await audited(t, "deleteDomain")).at(-1), { target: two.id, status: 409 });

    // the app goes: its domain stays, listed with app_exists false; the app route no longer reaches it
    apps.set("alice-gone", alice.id);
    const orphan = (await addDomain(t, alice.token, "alice-gone", uniqueDomain())).json();
    apps.answers.delete("alice-gone");
    await notify();
    const all = (await get(alice.token, "/v1/domains")).json();
    assert.equal(all.find((x: { id: string }) => x.id === orphan.id).app_exists, false);
    assert.equal(all.find((x: { id: string }) => x.id === two.id).app_exists, true);
    expectError(await get(alice.token, "/v1/apps/alice-gone/domains"), 404, "not_found");
    assert.equal((await del(alice.token, `/v1/domains/${orphan.id}?orphan_only=true`)).statusCode, 204);
    expectError(await del(alice.token, `/v1/domains/${orphan.id}`), 404, "not_found");
    assert.equal((await del(alice.token, `/v1/domains/${two.domain}`)).statusCode, 204);
    assert.equal((await del(alice.token, `/v1/domains/${uniqueDomain()}`)).statusCode, 404);
  });

  test("scopes: read lists, write changes; instance keys are refused on create and reach only their domain", async () => {
    const a = (await addDomain(t, alice.token, "alice-web", uniqueDomain())).json();
    const b = (await addDomain(t, alice.token, "alice-web", uniqueDomain())).json();

    const reader = await scopedKey(t.app, alice.token, ["domains:read"]);
    assert.ok((await get(reader, "/v1/domains")).json().length >= 2);
    assert.equal((await get(reader, "/v1/apps/alice-web/domains")).statusCode, 200);
    expectError(await addDomain(t, reader, "alice-web", uniqueDomain()), 403, "scope_insufficient");
    expectError(await verify(t, reader, "alice-web", a.id), 403, "scope_insufficient");
    expectError(await del(reader, `/v1/domains/${a.id}`), 403, "scope_insufficient");

    const pods = await scopedKey(t.app, alice.token, ["pods:write"]);
    expectError(await get(pods, "/v1/domains"), 403, "scope_insufficient");

    const onlyA = await scopedKey(t.app, alice.token, [`domains:write:${a.id}`]);
    expectError(await addDomain(t, onlyA, "alice-web", uniqueDomain()), 403, "scope_insufficient");
    assert.deepEqual(
      (await get(onlyA, "/v1/domains")).json().map((x: { id: string }) => x.id),
      [a.id],
    );
    assert.deepEqual(
      (await get(onlyA, "/v1/apps/alice-web/domains")).json().map((x: { id: string }) => x.id),
      [a.id],
    );
    assert.equal((await get(onlyA, `/v1/apps/alice-web/domains/${a.domain}/dns-provider`)).statusCode, 200);
    assert.equal((await verify(t, onlyA, "alice-web", a.id)).statusCode, 200);
    expectError(await verify(t, onlyA, "alice-web", b.id), 403, "scope_insufficient");
    expectError(await del(onlyA, `/v1/domains/${b.id}`), 403, "scope_insufficient");
    assert.equal((await del(onlyA, `/v1/apps/alice-web/domains/${a.id}`)).statusCode, 204);

    const writer = await scopedKey(t.app, alice.token, ["domains:write"]);
    assert.equal((await addDomain(t, writer, "alice-web", uniqueDomain())).statusCode, 201);
    assert.equal((await del(writer, `/v1/domains/${b.id}`)).statusCode, 204);
    expectError(await get("", "/v1/domains"), 401, "auth_required");
  });
});
