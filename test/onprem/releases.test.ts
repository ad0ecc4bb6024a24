import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { createHash, randomBytes } from "node:crypto";
import { readdir } from "node:fs/promises";
import path from "node:path";
import { call, expectError, OPERATOR_TOKEN, signup } from "../helpers/app.js";
import { makeOrg } from "../orgs/lib.js";
import { downloadSignature } from "../../src/onprem/releases-service.js";
import { acceptTerms, approve, get, post, readyAccount, startOnpremApp, type OnpremApp } from "./lib.js";

const sha = (b: Buffer) => createHash("sha256").update(b).digest("hex");

describe("on-premises releases and signed download addresses", () => {
  let o: OnpremApp;
  before(async () => {
    o = await startOnpremApp();
  });
  after(async () => {
    await o.close();
  });
  const publish = (query: string, body: Buffer, token = OPERATOR_TOKEN) =>
    call(o.t.app, {
      method: "POST",
      url: `/v1/operator/onprem/releases?${query}`,
      token,
      headers: { "content-type": "application/octet-stream" },
      body,
    });
  /** GET of a download address (absolute, as the API returns it) through the app */
  const fetchUrl = (url: string) => {
    const u = new URL(url);
    return call(o.t.app, { url: u.pathname + u.search });
  };

  test("the operator publishes a bundle; size and SHA-256 are computed; latest is public, the list is for accounts", async () => {
    const amd = randomBytes(300_000);
    const res = await publish("version=1.0.0&architecture=amd64", amd);
    assert.equal(res.statusCode, 201, res.body);
    const r1 = res.json();
    assert.equal(r1.size, amd.length);
    assert.equal(r1.sha256, sha(amd));
    assert.equal(r1.filename, "platform-onprem-1.0.0-amd64.tar.gz");
    const arm = randomBytes(1000);
    const r2 = (
      await publish(`version=1.0.0&architecture=arm64&filename=platform-arm.tgz&sha256=${sha(arm).toUpperCase()}`, arm)
    ).json();
    assert.equal(r2.filename, "platform-arm.tgz");
    const newer = randomBytes(2000);
    const r3 = (await publish("version=1.1.0&architecture=amd64", newer)).json();

    // the same version and architecture again: 409, nothing stored
    expectError(await publish("version=1.1.0&architecture=amd64", randomBytes(10)), 409, "conflict");
    // a given sha256 the bytes do not have, an empty body, bad parameters: 400
    expectError(
      await publish(`version=1.2.0&architecture=amd64&sha256=${"0".repeat(64)}`, newer),
      400,
      "invalid_request",
    );
    expectError(await publish("version=1.2.0&architecture=amd64", Buffer.alloc(0)), 400, "invalid_request");
    expectError(await publish("version=../etc&architecture=amd64", newer), 400, "invalid_request");
    expectError(await publish("architecture=amd64", newer), 400, "invalid_request");
    const u = await signup(o.t.app);
    expectError(await publish("version=9.9.9&architecture=amd64", newer, u.token), 401);
    const files = await readdir(path.join(o.t.config.dataDir, "onprem-releases"));
    assert.deepEqual(files.sort(), [r1.id, r2.id, r3.id].map((id) => `${id}.bundle`).sort(), "no leftovers");

    const latest = await get(o.t, "/v1/onprem/latest");
    assert.equal(latest.statusCode, 200, latest.body);
    assert.deepEqual(
      latest.json().map((r: { id: string }) => r.id),
      [r3.id, r2.id],
      "the newest of each architecture",
    );
    const list = await get(o.t, "/v1/onprem/releases", u.token);
    assert.equal(list.statusCode, 200, list.body);
    assert.deepEqual(
      list.json().map((r: { id: string }) => r.id),
      [r3.id, r2.id, r1.id],
    );
    assert.deepEqual(list.json()[2], r1);
  });

  test("a download address serves the published bytes (matching the SHA-256) for one hour", async () => {
    const bytes = randomBytes(1_500_000);
    const release = (await publish("version=2.0.0&architecture=amd64", bytes)).json();
    const u = await readyAccount(o.t);
    const res = await post(o.t, `/v1/onprem/releases/${release.id}/download`, u.token, {});
    assert.equal(res.statusCode, 200, res.body);
    const d = res.json();
    assert.deepEqual(d.release, release);
    const ttl = Date.parse(d.expires_at) - Date.now();
    assert.ok(ttl > 3590_000 && ttl <= 3600_000, `valid one hour (${ttl} ms)`);
    assert.match(d.url, new RegExp(`^http://[^/]+/v1/onprem/releases/${release.id}/file\\?expires=\\d+&sig=[\\w-]+$`));

    // no token needed: the address is the credential
    const file = await fetchUrl(d.url);
    assert.equal(file.statusCode, 200);
    assert.equal(file.headers["content-type"], "application/octet-stream");
    assert.equal(Number(file.headers["content-length"]), bytes.length);
    assert.match(
      String(file.headers["content-disposition"]),
      /attachment; filename="platform-onprem-2\.0\.0-amd64\.tar\.gz"/,
    );
    assert.equal(file.rawPayload.length, bytes.length);
    assert.equal(sha(file.rawPayload), release.sha256);
    assert.ok(file.rawPayload.equals(bytes));

    // over a real connection too
    await o.t.app.listen({ port: 0, host: "127.0.0.1" });
    const port = (o.t.app.server.address() as { port: number }).port;
    const u2 = new URL(d.url);
    const real = await fetch(`http://127.0.0.1:${port}${u2.pathname}${u2.search}`);
    assert.equal(real.status, 200);
    assert.equal(sha(Buffer.from(await real.arrayBuffer())), release.sha256);
  });

  test("an expired or altered address is 403 download_expired", async () => {
    const release = (await publish("version=3.0.0&architecture=amd64", randomBytes(100))).json();
    const other = (await publish("version=3.0.0&architecture=arm64", randomBytes(100))).json();
    const u = await readyAccount(o.t);
    const d = (await post(o.t, `/v1/onprem/releases/${release.id}/download`, u.token, {})).json();
    const url = new URL(d.url);
    const expires = Number(url.searchParams.get("expires"));
    const sig = url.searchParams.get("sig")!;
    const at = (id: string, e: number, s: string) =>
      call(o.t.app, { url: `/v1/onprem/releases/${id}/file?expires=${e}&sig=${s}` });
    assert.equal((await at(release.id, expires, sig)).statusCode, 200);

    // tampered: a later expiry, another release, another signature
    expectError(await at(release.id, expires + 3600, sig), 403, "download_expired");
    expectError(await at(other.id, expires, sig), 403, "download_expired");
    expectError(
      await at(release.id, expires, sig.slice(0, -2) + (sig.endsWith("AA") ? "BB" : "AA")),
      403,
      "download_expired",
    );
    expectError(await at(release.id, expires, "x"), 403, "download_expired");
    // expired: an address the platform signed, one hour and a second ago
    const key = o.t.platform.secrets.derive("onprem-release-download");
    const past = Math.floor(Date.now() / 1000) - 1;
    const expired = await at(release.id, past, downloadSignature(key, release.id, past));
    expectError(expired, 403, "download_expired");
    assert.match(expired.json().error.message, /expired/);
    // the same construction with a future expiry works: the test signs exactly as the platform does
    const future = Math.floor(Date.now() / 1000) + 60;
    assert.equal((await at(release.id, future, downloadSignature(key, release.id, future))).statusCode, 200);
    // a key derived for another purpose does not sign download addresses
    const wrong = o.t.platform.secrets.derive("something else");
    expectError(await at(release.id, future, downloadSignature(wrong, release.id, future)), 403, "download_expired");
    expectError(await call(o.t.app, { url: `/v1/onprem/releases/${release.id}/file` }), 400, "invalid_request");
  });

  test("downloads need approval and terms; any member of an approved organization may download for it", async () => {
    const release = (await publish("version=4.0.0&architecture=amd64", randomBytes(50))).json();
    const org = await makeOrg(o.t, { admins: 1, members: 1 });
    const member = org.members[0];
    const download = (token: string, body: unknown) =>
      post(o.t, `/v1/onprem/releases/${release.id}/download`, token, body);
    expectError(await download(member.token, { scope: "org" }), 403, "onprem_approval_required");
    await approve(o.t, org.admins[0].token, "org");
    expectError(await download(member.token, { scope: "org" }), 412, "terms_required");
    await acceptTerms(o.t, member.token);
    const ok = await download(member.token, { scope: "org" });
    assert.equal(ok.statusCode, 200, ok.body);
    // personally the member is not approved
    expectError(await download(member.token, { scope: "me" }), 403, "onprem_approval_required");
    expectError(await download(org.outsider.token, { scope: "org" }), 404, "not_found");
    const u = await readyAccount(o.t);
    expectError(await post(o.t, "/v1/onprem/releases/00000000-0000-4000-8000-000000000000/download", u.token, {}), 404);
  });
});
