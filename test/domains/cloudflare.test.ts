import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { call, expectError, scopedKey, type TestApp } from "../helpers/app.js";
import { CloudflareClient } from "../../src/domains/cloudflare.js";
import type { ApiError } from "../../src/http/errors.js";
import { Outbound } from "../../src/net/outbound.js";
import { addDomain, APPS_DOMAIN, domainsApp, FakeCloudflare, TestDns, type TestApps, user, verify } from "./lib.js";

const TOKEN = `cf-${randomBytes(18).toString("hex")}`;

/** cf-autosetup against a local server speaking Cloudflare's documented DNS-records API, then DNS verification. */
describe("custom domains: Cloudflare autosetup", () => {
  const dns = new TestDns();
  const cf = new FakeCloudflare(TOKEN, dns);
  let t: TestApp;
  let apps: TestApps;
  let alice: { token: string; id: string };

  /** a domain www.<zone> of app "web", its zone on Cloudflare (NS records say so) */
  const cloudflareDomain = async () => {
    const zone = `z${randomBytes(4).toString("hex")}.example.com`;
    const zoneId = cf.addZone(zone);
    dns.add(zone, "NS", "ada.ns.cloudflare.com");
    dns.add(zone, "NS", "bob.ns.cloudflare.com");
    const res = await addDomain(t, alice.token, "web", `www.${zone}`);
    assert.equal(res.statusCode, 201, res.body);
    return { zone, zoneId, d: res.json() as { id: string; domain: string; verification: { txt: { value: string } } } };
  };
  const autosetup = (id: string, body: Record<string, unknown>, token = alice.token) =>
    call(t.app, { method: "POST", url: `/v1/apps/web/domains/${id}/cf-autosetup`, token, body });

  before(async () => {
    await dns.start();
    await cf.start();
    ({ t, apps } = await domainsApp(dns, { CLOUDFLARE_API_BASE: cf.base }));
    alice = await user(t);
    apps.set("web", alice.id);
  });
  after(async () => {
    await t.close();
    await cf.close();
    await dns.close();
  });

  test("dns-provider says cloudflare; autosetup writes the TXT and the CNAME; verify then succeeds", async () => {
    const { zone, zoneId, d } = await cloudflareDomain();
    const p = (await call(t.app, { url: `/v1/apps/web/domains/${d.id}/dns-provider`, token: alice.token })).json();
    assert.equal(p.provider, "cloudflare");
    assert.equal(p.autosetup_supported, true);

    const before = cf.calls.length;
    const res = await autosetup(d.id, { api_token: TOKEN });
    assert.equal(res.statusCode, 200, res.body);
    const out = res.json();
    assert.deepEqual(out.zone, { id: zoneId, name: zone });
    assert.deepEqual(
      out.records.map((r: Record<string, unknown>) => [r.type, r.name, r.content, r.proxied, r.action]),
      [
        ["TXT", `_platform-verify.${d.domain}`, d.verification.txt.value, false, "created"],
        ["CNAME", d.domain, `web.${APPS_DOMAIN}`, false, "created"],
      ],
    );
    assert.equal(out.domain.status, "pending");
    assert.ok(!res.body.includes(TOKEN), "the token is never echoed");
    // the zone was found by walking up from the domain; every call carried the user's token as a bearer
    const mine = cf.calls.slice(before);
    assert.deepEqual(
      mine.map((c) => `${c.method} ${c.url.replace(/\/client\/v4/, "")}`),
      [
        `GET /zones?name=${d.domain}`,
        `GET /zones?name=${zone}`,
        `GET /zones/${zoneId}/dns_records?type=TXT&name=_platform-verify.${d.domain}`,
        `POST /zones/${zoneId}/dns_records`,
        `GET /zones/${zoneId}/dns_records?type=CNAME&name=${d.domain}`,
        `POST /zones/${zoneId}/dns_records`,
      ],
    );
    assert.ok(mine.every((c) => c.authorization === `Bearer ${TOKEN}`));

    const v = (await verify(t, alice.token, "web", d.id)).json();
    assert.equal(v.verified, true, JSON.stringify(v));
    assert.equal(v.method, "txt");

    // again: nothing to change
    const again = (await autosetup(d.id, { api_token: TOKEN })).json();
    assert.deepEqual(
      again.records.map((r: { action: string }) => r.action),
      ["unchanged", "unchanged"],
    );
  });

  test("existing records of the name are updated; proxied CNAMEs leave the TXT to verify", async () => {
    const { zoneId, d } = await cloudflareDomain();
    await fetch(`${cf.base}/zones/${zoneId}/dns_records`, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ type: "TXT", name: `_platform-verify.${d.domain}`, content: "stale", ttl: 1 }),
    });
    const out = (await autosetup(d.id, { api_token: TOKEN, proxied: true })).json();
    assert.deepEqual(
      out.records.map((r: { type: string; action: string; proxied: boolean }) => [r.type, r.action, r.proxied]),
      [
        ["TXT", "updated", false],
        ["CNAME", "created", true],
      ],
    );
    assert.equal(cf.records.get(zoneId)!.filter((r) => r.type === "TXT").length, 1);
    const v = (await verify(t, alice.token, "web", d.id)).json();
    assert.equal(v.verified, true, JSON.stringify(v));
    assert.equal(v.method, "txt");
    assert.deepEqual(v.checks.cname.found, [], "a proxied name answers with Cloudflare's addresses, not a CNAME");
    // switching proxying off updates the CNAME
    const off = (await autosetup(d.id, { api_token: TOKEN, proxied: false })).json();
    assert.deepEqual(
      off.records.map((r: { action: string }) => r.action),
      ["unchanged", "updated"],
    );
  });

  test("Cloudflare's refusals: a bad token 400, no zone 400, its failures 502 provider_error with its message", async () => {
    const { d } = await cloudflareDomain();
    const wrong = await autosetup(d.id, { api_token: "not-the-token" });
    expectError(wrong, 400, "invalid_request");
    assert.match(wrong.json().error.message, /^api_token: Cloudflare refused the token: 10000 Authentication error/);
    assert.ok(!wrong.body.includes("not-the-token"));

    const elsewhere = await addDomain(t, alice.token, "web", `www.z${randomBytes(4).toString("hex")}.example.org`);
    const noZone = await autosetup(elsewhere.json().id, { api_token: TOKEN });
    expectError(noZone, 400, "invalid_request");
    assert.match(noZone.json().error.message, /no Cloudflare zone holding/);

    cf.failWith = { status: 500, code: 1000, message: "Internal error" };
    try {
      const failed = await autosetup(d.id, { api_token: TOKEN });
      expectError(failed, 502, "provider_error");
      assert.match(failed.json().error.message, /Cloudflare refused GET \/zones: 1000 Internal error/);
    } finally {
      cf.failWith = null;
    }

    // a name Cloudflare will not take a CNAME for (an A record there): its code and message
    const { zoneId, d: taken } = await cloudflareDomain();
    cf.records
      .get(zoneId)!
      .push({ id: "a1", type: "A", name: taken.domain, content: "192.0.2.1", proxied: false, ttl: 1 });
    const conflict = await autosetup(taken.id, { api_token: TOKEN });
    expectError(conflict, 502, "provider_error");
    assert.match(conflict.json().error.message, /81053 An A, AAAA, or CNAME record with that host already exists/);

    expectError(await autosetup(d.id, {}), 400, "invalid_request");
    expectError(await autosetup(d.id, { api_token: "bad token\r\nx: y" }), 400, "invalid_request");
    const reader = await scopedKey(t.app, alice.token, ["domains:read"]);
    expectError(await autosetup(d.id, { api_token: TOKEN }, reader), 403, "scope_insufficient");
  });

  test("Cloudflare unreachable or silent: 502 provider_error", async () => {
    const loopbackAllowed = Outbound.fromEnv({ OUTBOUND_ALLOW: "loopback" });
    const closed = new CloudflareClient("http://127.0.0.1:9/client/v4", 1000, loopbackAllowed);
    await assert.rejects(closed.findZone(TOKEN, "www.example.com"), (err: ApiError) => {
      assert.equal(err.code, "provider_error");
      assert.match(err.message, /could not be reached/);
      return true;
    });
    // a server that takes the request and never answers
    const silent = http.createServer(() => {});
    await new Promise<void>((r) => silent.listen(0, "127.0.0.1", () => r()));
    try {
      const port = (silent.address() as AddressInfo).port;
      const slow = new CloudflareClient(`http://127.0.0.1:${port}/client/v4`, 300, loopbackAllowed);
      const started = Date.now();
      await assert.rejects(slow.findZone(TOKEN, "www.example.com"), (err: ApiError) => {
        assert.equal(err.code, "provider_error");
        assert.match(err.message, /did not answer within 300 ms/);
        return true;
      });
      assert.ok(Date.now() - started < 2000);
    } finally {
      silent.closeAllConnections();
      await new Promise<void>((r) => silent.close(() => r()));
    }
  });

  test("the API token is stored nowhere: no table of the store holds it", async () => {
    const { rows: tables } = await t.db.query<{ name: string }>(
      "SELECT quote_ident(table_schema) || '.' || quote_ident(table_name) AS name FROM information_schema.tables WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema')",
    );
    assert.ok(tables.length > 10);
    for (const { name } of tables) {
      const { rows } = await t.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM ${name} AS r WHERE r::text LIKE '%' || $1 || '%'`,
        [TOKEN],
      );
      assert.equal(rows[0].n, 0, `${name} holds the token`);
    }
  });
});
