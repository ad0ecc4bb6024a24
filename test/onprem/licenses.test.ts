import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { createPublicKey, verify } from "node:crypto";
import { stat } from "node:fs/promises";
import path from "node:path";
import { expectError, signup } from "../helpers/app.js";
import { makeOrg } from "../orgs/lib.js";
import { ConfigError } from "../../src/config/config.js";
import { onpremConfig } from "../../src/onprem/config.js";
import { canonicalJson, loadSigningKey, verifyLicense } from "../../src/onprem/license.js";
import { acceptTerms, approve, get, post, readyAccount, startOnpremApp, type OnpremApp } from "./lib.js";

type Doc = { license: Record<string, unknown>; signature: string };

describe("on-premises trials and signed licenses", () => {
  let o: OnpremApp;
  before(async () => {
    o = await startOnpremApp({ ONPREM_TRIAL_DAYS: "14", ONPREM_TRIAL_HOSTS: "2" });
  });
  after(async () => {
    await o.close();
  });
  const publicKey = async () => {
    const res = await get(o.t, "/v1/onprem/license-key");
    assert.equal(res.statusCode, 200, res.body);
    return res.json();
  };

  test("a trial is issued once per owner: 409 afterwards, also after it expired", async () => {
    const u = await readyAccount(o.t);
    const res = await post(o.t, "/v1/onprem/licenses/trial", u.token, { customer: "Acme Trial", scope: "me" });
    assert.equal(res.statusCode, 201, res.body);
    const l = res.json();
    assert.equal(l.kind, "trial");
    assert.equal(l.status, "active");
    assert.equal(l.hosts, 2);
    assert.deepEqual(l.features, ["trial"]);
    assert.deepEqual(l.owner, { kind: "account", id: u.id });
    const days = (Date.parse(l.not_after) - Date.parse(l.not_before)) / 86_400_000;
    assert.equal(days, 14);
    expectError(await post(o.t, "/v1/onprem/licenses/trial", u.token, { customer: "Again" }), 409, "conflict");

    // the trial ends; a new one is still refused
    await o.t.db.query(
      "UPDATE onprem_licenses SET not_before = now() - interval '20 days', not_after = now() - interval '6 days' WHERE id = $1",
      [l.id],
    );
    const listed = (await get(o.t, "/v1/onprem/licenses", u.token)).json();
    assert.equal(listed.find((x: { id: string }) => x.id === l.id).status, "expired");
    expectError(await post(o.t, "/v1/onprem/licenses/trial", u.token, { customer: "Again" }), 409, "conflict");
  });

  test("concurrent trial requests of one owner issue one trial", async () => {
    const u = await readyAccount(o.t);
    const results = await Promise.all(
      Array.from({ length: 6 }, () => post(o.t, "/v1/onprem/licenses/trial", u.token, { customer: "Race" })),
    );
    assert.equal(results.filter((r) => r.statusCode === 201).length, 1);
    for (const r of results.filter((x) => x.statusCode !== 201)) expectError(r, 409, "conflict");
    const { rows } = await o.t.db.query("SELECT 1 FROM onprem_licenses WHERE owner_id = $1", [u.id]);
    assert.equal(rows.length, 1);
  });

  test("the license file verifies offline with the published key; a tampered one does not", async () => {
    const u = await readyAccount(o.t);
    const issued = (await post(o.t, "/v1/onprem/licenses/trial", u.token, { customer: "Verify GmbH" })).json();
    const file = await get(o.t, `/v1/onprem/licenses/${issued.id}/file`, u.token);
    assert.equal(file.statusCode, 200, file.body);
    assert.match(
      String(file.headers["content-disposition"]),
      new RegExp(`attachment; filename="license-${issued.id}.json"`),
    );
    assert.match(String(file.headers["content-type"]), /^application\/json/);
    const doc = JSON.parse(file.body);
    assert.deepEqual(Object.keys(doc).sort(), ["key_id", "license", "signature"]);
    assert.deepEqual(Object.keys(doc.license).sort(), [
      "customer",
      "features",
      "hosts",
      "issued_at",
      "license_id",
      "not_after",
      "not_before",
      "owner",
    ]);
    assert.equal(doc.license.license_id, issued.id);
    assert.equal(doc.license.customer, "Verify GmbH");
    assert.deepEqual(doc.license.owner, { kind: "account", id: u.id });

    const inline = await get(o.t, `/v1/onprem/licenses/${issued.id}/file?inline=1`, u.token);
    assert.equal(inline.statusCode, 200);
    assert.equal(inline.headers["content-disposition"], undefined);
    assert.deepEqual(inline.json(), doc);
    assert.equal(inline.body, file.body, "the same bytes as issued");

    // an installation holds only the public key: plain node:crypto, no platform code
    const key = await publicKey();
    assert.equal(key.algorithm, "Ed25519");
    assert.equal(doc.key_id, key.key_id);
    const pub = createPublicKey(key.public_key_pem);
    assert.ok(verify(null, Buffer.from(canonicalJson(doc.license)), pub, Buffer.from(doc.signature, "base64")));
    assert.ok(createPublicKey({ key: Buffer.from(key.public_key, "base64"), format: "der", type: "spki" }).equals(pub));
    const good = verifyLicense(file.body, pub);
    assert.ok(good.ok && good.valid, JSON.stringify(good));

    for (const tamper of [
      (d: Doc) => (d.license.hosts = 500),
      (d: Doc) => (d.license.not_after = "2099-01-01T00:00:00.000Z"),
      (d: Doc) => (d.license.customer = "Someone Else"),
      (d: Doc) => (d.signature = Buffer.from("x".repeat(64)).toString("base64")),
    ]) {
      const copy = JSON.parse(file.body);
      tamper(copy);
      const v = verifyLicense(JSON.stringify(copy), pub);
      assert.equal(v.ok, false, JSON.stringify(copy.license));
      assert.ok(!verify(null, Buffer.from(canonicalJson(copy.license)), pub, Buffer.from(copy.signature, "base64")));
    }
    // key order in the file does not matter: the signature covers the canonical JSON
    const reordered = { signature: doc.signature, key_id: doc.key_id, license: { ...doc.license } };
    assert.ok(verifyLicense(JSON.stringify(reordered), pub).ok);
  });

  test("the signing key is generated into DATA_DIR with mode 0600 and read back at the next start", async () => {
    const file = path.join(o.t.config.dataDir, "onprem-signing-key.pem");
    assert.equal((await stat(file)).mode & 0o777, 0o600);
    const served = await publicKey();
    const again = await loadSigningKey(null, o.t.config.dataDir);
    assert.equal(again.file, file);
    assert.equal(again.keyId, served.key_id, "the same key after a restart");
    assert.equal(again.publicKey.export({ type: "spki", format: "pem" }), served.public_key_pem);
  });

  test("ONPREM_SIGNING_KEY gives the key; licenses signed with it verify with its public key", async () => {
    const { generateKeyPairSync } = await import("node:crypto");
    const pair = generateKeyPairSync("ed25519");
    const pem = pair.privateKey.export({ type: "pkcs8", format: "pem" }) as string;
    const b64 = (pair.privateKey.export({ type: "pkcs8", format: "der" }) as Buffer).toString("base64");
    for (const value of [pem, b64]) {
      const other = await startOnpremApp({ ONPREM_SIGNING_KEY: value });
      try {
        const u = await readyAccount(other.t);
        const l = (await post(other.t, "/v1/onprem/licenses/trial", u.token, { customer: "K" })).json();
        const text = (await get(other.t, `/v1/onprem/licenses/${l.id}/file`, u.token)).body;
        assert.ok(verifyLicense(text, pair.publicKey).ok);
        assert.equal(verifyLicense(text, createPublicKey((await publicKey()).public_key_pem)).ok, false);
      } finally {
        await other.close();
      }
    }
    // a bad key stops start-up naming the variable, before anything is built
    for (const bad of ["not a key", pair.publicKey.export({ type: "spki", format: "pem" }) as string])
      assert.throws(
        () => onpremConfig({ ONPREM_SIGNING_KEY: bad }),
        (e: Error) => e instanceof ConfigError && /ONPREM_SIGNING_KEY/.test(e.message),
      );
  });

  test("the list holds the caller's and the organization's licenses; others' are 404", async () => {
    const org = await makeOrg(o.t, { admins: 1, members: 1 });
    const [admin, member] = [org.admins[0], org.members[0]];
    await approve(o.t, admin.token, "org");
    await acceptTerms(o.t, admin.token);
    expectError(
      await post(o.t, "/v1/onprem/licenses/trial", member.token, { customer: "Org", scope: "org" }),
      403,
      "forbidden_role",
    );
    const orgTrial = await post(o.t, "/v1/onprem/licenses/trial", admin.token, { customer: "Org Inc", scope: "org" });
    assert.equal(orgTrial.statusCode, 201, orgTrial.body);
    assert.equal(orgTrial.json().scope, "org");
    assert.deepEqual(orgTrial.json().owner, { kind: "org", id: org.id });
    // the member's own trial (approved personally)
    await approve(o.t, member.token, "me");
    await acceptTerms(o.t, member.token);
    const own = (await post(o.t, "/v1/onprem/licenses/trial", member.token, { customer: "Me" })).json();

    const ids = (await get(o.t, "/v1/onprem/licenses", member.token)).json().map((l: { id: string }) => l.id);
    assert.deepEqual(ids.sort(), [orgTrial.json().id, own.id].sort());
    const fromOwner = (await get(o.t, "/v1/onprem/licenses", org.owner.token)).json().map((l: { id: string }) => l.id);
    assert.deepEqual(fromOwner, [orgTrial.json().id]);
    assert.equal((await get(o.t, `/v1/onprem/licenses/${orgTrial.json().id}/file`, member.token)).statusCode, 200);
    expectError(await get(o.t, `/v1/onprem/licenses/${own.id}/file`, org.owner.token), 404, "not_found");
    expectError(await get(o.t, `/v1/onprem/licenses/${orgTrial.json().id}/file`, org.outsider.token), 404, "not_found");
    assert.deepEqual((await get(o.t, "/v1/onprem/licenses", org.outsider.token)).json(), []);
    // the organization's trial is its own: the member's personal trial did not use it up, and vice versa
    expectError(
      await post(o.t, "/v1/onprem/licenses/trial", admin.token, { customer: "Org", scope: "org" }),
      409,
      "conflict",
    );
    const stranger = await signup(o.t.app);
    expectError(await get(o.t, "/v1/onprem/licenses/00000000-0000-4000-8000-000000000000/file", stranger.token), 404);
  });
});
