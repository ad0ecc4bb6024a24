import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { call, type TestApp } from "../helpers/app.js";
import { DnsLookup } from "../../src/domains/dns.js";
import {
  addDomain,
  APPS_DOMAIN,
  audited,
  domainsApp,
  TestDns,
  type TestApps,
  uniqueDomain,
  user,
  verify,
} from "./lib.js";

/** DNS verification (TXT token or CNAME to the app's host), its failures and timeouts, and DNS provider detection. */
describe("custom domains: DNS verification and provider detection", () => {
  const dns = new TestDns();
  let t: TestApp;
  let apps: TestApps;
  let alice: { token: string; id: string };
  const certificates: string[] = [];
  const add = async (slug = "web") => {
    const res = await addDomain(t, alice.token, slug, uniqueDomain());
    assert.equal(res.statusCode, 201, res.body);
    return res.json() as { id: string; domain: string; verification: { txt: { name: string; value: string } } };
  };
  const provider = async (d: { id: string }) =>
    (await call(t.app, { url: `/v1/apps/web/domains/${d.id}/dns-provider`, token: alice.token })).json();

  before(async () => {
    await dns.start();
    ({ t, apps } = await domainsApp(dns));
    // the certificates area (another part of issue 11) is asked for a certificate once a domain is verified
    t.platform.kernel.replace("certificates", {
      channel: "test_certificates",
      request: async (_q, host) => void certificates.push(host),
      load: async () => null,
      challenge: async () => null,
      onIssuanceFailed: () => {},
    });
    alice = await user(t);
    apps.set("web", alice.id);
  });
  after(async () => {
    await t.close();
    await dns.close();
  });

  test("the TXT record with the token verifies; a certificate is asked for; a verified domain is not asked again", async () => {
    const d = await add();
    dns.add(d.verification.txt.name, "TXT", "some-other-value");
    dns.add(d.verification.txt.name, "TXT", d.verification.txt.value);
    const res = await verify(t, alice.token, "web", d.id);
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json();
    assert.equal(body.verified, true);
    assert.equal(body.method, "txt");
    assert.equal(body.reason, null);
    assert.deepEqual(body.checks.txt.found.sort(), [d.verification.txt.value, "some-other-value"].sort());
    assert.equal(body.domain.status, "verified");
    assert.equal(body.domain.verified_by, "txt");
    assert.ok(body.domain.verified_at);
    assert.equal(body.domain.last_check, "Verified by TXT record.");
    assert.deepEqual(certificates, [d.domain]);
    assert.deepEqual((await audited(t, "verifyAppDomain")).at(-1), { target: d.id, status: 200 });

    // verified stays verified: nothing is asked of DNS, even once the record is gone
    dns.remove(d.verification.txt.name);
    const asked = dns.asked.length;
    const again = (await verify(t, alice.token, "web", d.domain)).json();
    assert.equal(again.verified, true);
    assert.equal(again.checks, null);
    assert.equal(dns.asked.length, asked);
    assert.deepEqual(certificates, [d.domain]);
  });

  test("a CNAME to <slug>.<APPS_DOMAIN> verifies (any case, trailing dot)", async () => {
    const d = await add();
    dns.add(d.domain, "CNAME", `WEB.${APPS_DOMAIN.toUpperCase()}.`);
    const body = (await verify(t, alice.token, "web", d.id)).json();
    assert.equal(body.verified, true, JSON.stringify(body));
    assert.equal(body.method, "cname");
    assert.deepEqual(body.checks.cname, {
      name: d.domain,
      expected: `web.${APPS_DOMAIN}`,
      found: [`web.${APPS_DOMAIN}`],
      error: null,
    });
    assert.equal(body.domain.verified_by, "cname");
    assert.ok(certificates.includes(d.domain));
  });

  test("without the records: 200 verified false with the reason and what DNS answered; the domain stays pending", async () => {
    const d = await add();
    const none = (await verify(t, alice.token, "web", d.id)).json();
    assert.equal(none.verified, false);
    assert.equal(none.method, null);
    assert.match(none.reason, new RegExp(`TXT _platform-verify\\.${d.domain.replace(/\./g, "\\.")} has none`));
    assert.match(none.reason, /CNAME .* has none/);
    assert.equal(none.checks.txt.error, "no_record");
    assert.equal(none.domain.status, "pending");

    // wrong values: named in the reason
    dns.add(d.verification.txt.name, "TXT", "not-the-token");
    dns.add(d.domain, "CNAME", "elsewhere.example.net");
    const wrong = (await verify(t, alice.token, "web", d.id)).json();
    assert.equal(wrong.verified, false);
    assert.match(wrong.reason, /"not-the-token", not "[0-9a-f]{40}"/);
    assert.match(
      wrong.reason,
      new RegExp(`"elsewhere\\.example\\.net", not "web\\.${APPS_DOMAIN.replace(/\./g, "\\.")}"`),
    );
    assert.deepEqual(wrong.checks.cname.found, ["elsewhere.example.net"]);
    // another app's host is not this app's
    dns.remove(d.domain);
    dns.add(d.domain, "CNAME", `other.${APPS_DOMAIN}`);
    assert.equal((await verify(t, alice.token, "web", d.id)).json().verified, false);

    // the last attempt shows in the lists
    const listed = (await call(t.app, { url: "/v1/apps/web/domains", token: alice.token })).json();
    const row = listed.find((x: { id: string }) => x.id === d.id);
    assert.equal(row.status, "pending");
    assert.match(row.last_check, /^Not verified: /);
    assert.ok(row.last_checked_at);
    assert.ok(!certificates.includes(d.domain));
  });

  test("a DNS server that does not answer is a timeout reported in the answer, never a 500, within DNS_TIMEOUT_MS", async () => {
    const d = await add();
    dns.silent.add(d.domain);
    dns.silent.add(d.verification.txt.name);
    const started = Date.now();
    const res = await verify(t, alice.token, "web", d.id);
    const took = Date.now() - started;
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json();
    assert.equal(body.verified, false);
    assert.equal(body.checks.txt.error, "timeout");
    assert.equal(body.checks.cname.error, "timeout");
    assert.match(body.reason, /DNS timeout/);
    // both questions are asked at once, each bounded by DNS_TIMEOUT_MS (400 ms here)
    assert.ok(took < 2000, `took ${took} ms`);

    // the provider detection stops at a silent server too
    dns.silent.add(d.domain.split(".").slice(1).join("."));
    const p = await provider(d);
    assert.equal(p.provider, "unknown");
    assert.equal(p.problem, "timeout");
  });

  test("an unreachable DNS server and a failing one are answers too", async () => {
    const closed = new DnsLookup(["127.0.0.1:9"], 300);
    assert.deepEqual(await closed.txt("example.com"), { ok: false, error: "unreachable" });
    const lookup = new DnsLookup([dns.address], 300);
    assert.deepEqual(await lookup.txt("nowhere.invalid"), { ok: false, error: "no_record" });
    dns.failing.add("broken.example.com");
    assert.deepEqual(await lookup.txt("broken.example.com"), { ok: false, error: "failed" });
  });

  test("dns-provider: NS records of the domain or its nearest parent, mapped to the provider", async () => {
    const cases: [string[], string][] = [
      [["ada.ns.cloudflare.com", "bob.ns.cloudflare.com"], "cloudflare"],
      [["ns-1234.awsdns-12.org", "ns-55.awsdns-06.com"], "route53"],
      [["ns-cloud-a1.googledomains.com"], "google"],
      [["ns.gabia.co.kr", "ns1.gabia.co.kr"], "gabia"],
      [["dns1.registrar-servers.com"], "namecheap"],
      [["ns01.domaincontrol.com"], "godaddy"],
      [["ns1-01.azure-dns.com"], "azure"],
      [["ns1.digitalocean.com"], "digitalocean"],
      [["ns1.vercel-dns.com"], "vercel"],
      [["dns1.p01.nsone.net"], "ns1"],
      [["ns1.example-dns.net"], "unknown"],
    ];
    for (const [nameservers, expected] of cases) {
      const d = await add();
      // www.<zone>.example.com: the NS records live at <zone>.example.com, found by walking up
      const zone = d.domain.split(".").slice(1).join(".");
      for (const ns of nameservers) dns.add(zone, "NS", ns);
      const p = await provider(d);
      assert.equal(p.provider, expected, JSON.stringify(p));
      assert.equal(p.domain, d.domain);
      assert.equal(p.zone, zone);
      assert.deepEqual(p.nameservers, [...nameservers].sort());
      assert.equal(p.autosetup_supported, expected === "cloudflare");
      assert.equal(p.problem, null);
    }
    // no NS anywhere up the tree: unknown, nothing failed
    const lone = await add();
    assert.deepEqual(await provider(lone), {
      domain: lone.domain,
      provider: "unknown",
      zone: null,
      nameservers: [],
      autosetup_supported: false,
      problem: null,
    });
  });
});
