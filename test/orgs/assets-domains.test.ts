/**
 * Custom domains follow their app between owners: designating a site as a company asset moves its domain, so the
 * edge keeps serving the verified domain (it serves a domain only while the app has the domain's owner), and
 * designating the domain moves its site.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { call, type TestApp } from "../helpers/app.js";
import { makeOrg, ORG, type TestOrg } from "./lib.js";
import { createTestApp } from "../helpers/app.js";

let t: TestApp;
let org: TestOrg;

before(async () => {
  t = await createTestApp({ env: { APPS_DOMAIN: "apps.orgdomains.test", DNS_SERVERS: "127.0.0.1:9" } });
  org = await makeOrg(t, { admins: 0, members: 1 });
});
after(async () => t?.close());

async function siteWithDomain(token: string, name: string, domain: string) {
  const site = await call(t.app, { method: "POST", url: "/v1/static", token, body: { name } });
  assert.equal(site.statusCode, 201, site.body);
  const added = await call(t.app, {
    method: "POST",
    url: `/v1/apps/${site.json().slug}/domains`,
    token,
    body: { domain },
  });
  assert.equal(added.statusCode, 201, added.body);
  return { site: site.json(), domain: added.json() };
}

const domainsOf = async (token: string, headers?: Record<string, string>) =>
  (await call(t.app, { url: "/v1/domains", token, headers })).json().map((d: { domain: string }) => d.domain);

test("designating a site moves its custom domain; designating a domain moves its site", async () => {
  const member = org.members[0];
  const one = await siteWithDomain(member.token, "domain-site", "www.one.example");
  const res = await call(t.app, {
    method: "POST",
    url: "/v1/org/assets",
    token: member.token,
    body: { kind: "site", id: one.site.id },
  });
  assert.equal(res.statusCode, 201, res.body);
  assert.deepEqual(
    res.json().moved_with.map((a: { kind: string; name: string }) => `${a.kind} ${a.name}`),
    ["domain www.one.example"],
  );
  assert.deepEqual(await domainsOf(member.token, ORG), ["www.one.example"]);
  assert.deepEqual(await domainsOf(member.token), []);

  const two = await siteWithDomain(member.token, "domain-two", "www.two.example");
  const byDomain = await call(t.app, {
    method: "POST",
    url: "/v1/org/assets",
    token: member.token,
    body: { kind: "domain", id: two.domain.id },
  });
  assert.equal(byDomain.statusCode, 201, byDomain.body);
  const company = await call(t.app, { url: "/v1/static", token: member.token, headers: ORG });
  assert.ok(company.json().some((s: { slug: string }) => s.slug === two.site.slug));
});
