/**
 * Requests to user-supplied addresses (src/net/outbound.ts, issue 34 item 2): the address classifier over every
 * internal range (no traffic is ever sent to a non-loopback address here), OUTBOUND_ALLOW, the client's redirect
 * re-check and size bound against loopback servers, and through HTTP with loopback NOT allowed: the GitLab
 * integration's PUT and /test refuse loopback, `localhost` and the metadata address with 400
 * destination_forbidden before any connection (a counting server sees none).
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { call, createTestApp, expectError, type TestApp } from "../helpers/app.js";
import { makeOrg, type Person } from "../orgs/lib.js";
import { AddressPolicy, classifyAddress } from "../../src/net/address-policy.js";
import { Outbound, OutboundError } from "../../src/net/outbound.js";
import { manifestDigest } from "../../src/builds/digest.js";

describe("address classifier", () => {
  test("every internal range has its class; public addresses are public", () => {
    const cases: [string, string][] = [
      ["127.0.0.1", "loopback"],
      ["127.255.0.9", "loopback"],
      ["::1", "loopback"],
      ["10.0.0.1", "private"],
      ["172.16.0.1", "private"],
      ["172.31.255.254", "private"],
      ["192.168.1.1", "private"],
      ["fc00::1", "private"],
      ["fd12:3456::1", "private"],
      ["169.254.0.1", "link_local"],
      ["fe80::1", "link_local"],
      ["fe80::1%eth0", "link_local"],
      ["169.254.169.254", "metadata"],
      ["fd00:ec2::254", "metadata"],
      ["100.100.100.200", "metadata"],
      ["100.64.0.1", "cgnat"],
      ["100.127.255.255", "cgnat"],
      ["0.0.0.0", "unspecified"],
      ["::", "unspecified"],
      ["224.0.0.1", "multicast"],
      ["239.255.255.250", "multicast"],
      ["ff02::1", "multicast"],
      ["255.255.255.255", "reserved"],
      ["240.0.0.1", "reserved"],
      ["192.0.2.10", "reserved"],
      ["198.18.0.1", "reserved"],
      ["2001:db8::1", "reserved"],
      ["2002:a9fe:a9fe::1", "reserved"],
      ["::127.0.0.1", "reserved"],
      ["100::1", "reserved"],
      // IPv4-mapped and NAT64 addresses are what they reach
      ["::ffff:127.0.0.1", "loopback"],
      ["::ffff:7f00:1", "loopback"],
      ["::ffff:169.254.169.254", "metadata"],
      ["::ffff:a9fe:a9fe", "metadata"],
      ["::ffff:10.1.2.3", "private"],
      ["64:ff9b::a9fe:a9fe", "metadata"],
      ["8.8.8.8", "public"],
      ["172.32.0.1", "public"],
      ["100.128.0.1", "public"],
      ["::ffff:8.8.8.8", "public"],
      ["2606:4700:4700::1111", "public"],
    ];
    for (const [address, cls] of cases) assert.equal(classifyAddress(address), cls, address);
    assert.throws(() => classifyAddress("example.com"));
  });

  test("OUTBOUND_ALLOW: class names and CIDRs; metadata only by name; a bad entry stops start-up", () => {
    const none = AddressPolicy.fromEnv({});
    for (const a of ["127.0.0.1", "::1", "10.0.0.1", "169.254.169.254", "::ffff:127.0.0.1"])
      assert.equal(none.verdict(a).allowed, false, a);
    assert.equal(none.verdict("8.8.8.8").allowed, true);

    const some = AddressPolicy.fromEnv({ OUTBOUND_ALLOW: "loopback, 10.20.0.0/16,fd12::/16,169.254.0.0/16" });
    assert.equal(some.verdict("127.0.0.1").allowed, true);
    assert.equal(some.verdict("::ffff:127.0.0.1").allowed, true);
    assert.equal(some.verdict("10.20.3.4").allowed, true);
    assert.equal(some.verdict("::ffff:10.20.3.4").allowed, true);
    assert.equal(some.verdict("10.21.0.1").allowed, false);
    assert.equal(some.verdict("fd12::5").allowed, true);
    assert.equal(some.verdict("169.254.1.1").allowed, true);
    assert.deepEqual(some.verdict("169.254.169.254"), { allowed: false, class: "metadata" });
    assert.equal(AddressPolicy.fromEnv({ OUTBOUND_ALLOW: "metadata" }).verdict("169.254.169.254").allowed, true);

    for (const bad of ["loopbak", "10.0.0.0/33", "300.1.1.1/8", "1.2.3.4/8/1"])
      assert.throws(() => AddressPolicy.fromEnv({ OUTBOUND_ALLOW: bad }), /OUTBOUND_ALLOW/, bad);
  });
});

/** A loopback server that counts connections; /to?url= redirects there, /big answers 2 MB. */
async function countingServer() {
  let connections = 0;
  const server = http.createServer((req, res) => {
    const u = new URL(req.url!, "http://x");
    if (u.pathname === "/to") {
      res.writeHead(302, { location: u.searchParams.get("url")! });
      return res.end();
    }
    if (u.pathname === "/big") return res.end(Buffer.alloc(2 * 1024 * 1024, 97));
    res.setHeader("content-type", "application/json");
    res.end(JSON.stringify({ version: "17.0.0", path: u.pathname }));
  });
  server.on("connection", () => connections++);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    connections: () => connections,
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

describe("outbound client", () => {
  let s: Awaited<ReturnType<typeof countingServer>>;
  const loopback = Outbound.fromEnv({ OUTBOUND_ALLOW: "loopback" });
  const strict = Outbound.fromEnv({});
  before(async () => {
    s = await countingServer();
  });
  after(async () => {
    await loopback.close();
    await strict.close();
    await s.close();
  });

  const reason = (r: OutboundFailure) => (err: unknown) => err instanceof OutboundError && err.reason === r;
  type OutboundFailure = OutboundError["reason"];

  test("refused before connecting: loopback literal, localhost, metadata; allowed loopback answers", async () => {
    await assert.rejects(strict.request(`http://127.0.0.1:${s.port}/`, { timeoutMs: 2000 }), reason("forbidden"));
    await assert.rejects(strict.request(`http://localhost:${s.port}/`, { timeoutMs: 2000 }), reason("forbidden"));
    await assert.rejects(strict.request(`http://[::ffff:127.0.0.1]:${s.port}/`, { timeoutMs: 2000 }), /loopback/);
    await assert.rejects(strict.request(`http://2130706433:${s.port}/`, { timeoutMs: 2000 }), /loopback/);
    await assert.rejects(strict.request("http://169.254.169.254/latest/meta-data/", { timeoutMs: 2000 }), /metadata/);
    await assert.rejects(strict.check(`http://localhost:${s.port}/`), reason("forbidden"));
    assert.equal(s.connections(), 0);

    const ok = await loopback.request(`http://localhost:${s.port}/a`, { timeoutMs: 2000 });
    assert.equal(ok.status, 200);
    assert.equal(JSON.parse(ok.body).path, "/a");
  });

  test("a redirect to a forbidden address is checked again and refused; not followed unless asked", async () => {
    const to = (url: string) => `http://127.0.0.1:${s.port}/to?url=${encodeURIComponent(url)}`;
    await assert.rejects(
      loopback.request(to("http://169.254.169.254/latest/meta-data/"), { timeoutMs: 2000, followRedirects: 3 }),
      (err: unknown) => err instanceof OutboundError && err.reason === "forbidden" && /metadata/.test(err.message),
    );
    await assert.rejects(
      loopback.request(to("http://10.0.0.1/"), { timeoutMs: 2000, followRedirects: 3 }),
      /private address/,
    );
    await assert.rejects(loopback.request(to("file:///etc/passwd"), { timeoutMs: 2000, followRedirects: 3 }), /http/);
    // an allowed target is followed
    const followed = await loopback.request(to(`http://localhost:${s.port}/b`), {
      timeoutMs: 2000,
      followRedirects: 1,
    });
    assert.equal(JSON.parse(followed.body).path, "/b");
    // by default the 3xx is the answer
    const kept = await loopback.request(to("http://169.254.169.254/"), { timeoutMs: 2000 });
    assert.equal(kept.status, 302);
  });

  test("base-image digests: a Dockerfile naming an internal registry is refused before any request", async () => {
    await assert.rejects(manifestDigest("169.254.169.254/latest/meta-data:x", null, strict), /metadata address/);
    await assert.rejects(manifestDigest("10.0.0.5:443/team/base:1", null, strict), /private address/);
    await assert.rejects(manifestDigest("[fd00:ec2::254]/x:1", null, strict), /metadata address/);
  });

  test("answers larger than maxBytes are cut off", async () => {
    await assert.rejects(
      loopback.request(`http://127.0.0.1:${s.port}/big`, { timeoutMs: 5000, maxBytes: 64 * 1024 }),
      reason("too_large"),
    );
  });
});

describe("GitLab integration with loopback not allowed", () => {
  let t: TestApp;
  let s: Awaited<ReturnType<typeof countingServer>>;
  let admin: Person;
  before(async () => {
    t = await createTestApp({ env: { OUTBOUND_ALLOW: "", GITLAB_TIMEOUT_MS: "2000" } });
    s = await countingServer();
    admin = (await makeOrg(t, { admins: 1, members: 0 })).admins[0];
  });
  after(async () => {
    await s?.close();
    await t?.close();
  });

  test("PUT and /test refuse loopback, localhost and metadata with 400 destination_forbidden, connecting nowhere", async () => {
    const urls = [
      `http://127.0.0.1:${s.port}`,
      `http://localhost:${s.port}/`,
      `http://[::1]:${s.port}`,
      "http://169.254.169.254/",
    ];
    for (const base_url of urls) {
      const token = "glpat-anything-1234";
      const test = await call(t.app, {
        method: "POST",
        url: "/v1/org/integrations/gitlab/test",
        token: admin.token,
        body: { base_url, group_path: "acme", token },
      });
      expectError(test, 400, "destination_forbidden");
      assert.match(test.json().error.message, /loopback|metadata/, base_url);
      const put = await call(t.app, {
        method: "PUT",
        url: "/v1/org/integrations/gitlab",
        token: admin.token,
        body: { base_url, group_path: "acme", token },
      });
      expectError(put, 400, "destination_forbidden");
    }
    assert.equal(s.connections(), 0);
    const got = await call(t.app, { method: "GET", url: "/v1/org/integrations/gitlab", token: admin.token });
    assert.equal(got.json().configured, false);
  });
});
