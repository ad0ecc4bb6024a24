/**
 * The on-premises edition verifies its own license at start-up (LICENSE_FILE, ONPREM_LICENSE_PUBLIC_KEY) and reports
 * it in /v1/edition; a bad license stops start-up with one line naming LICENSE_FILE (exit code 2).
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { generateKeyPairSync, randomUUID } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { call, createTestApp, freshDatabase } from "../helpers/app.js";
import { ConfigError } from "../../src/config/config.js";
import { onpremConfig } from "../../src/onprem/config.js";
import { editionView } from "../../src/onprem/installation.js";
import { keyIdOf, licenseText, signLicense } from "../../src/onprem/license.js";
import { get, post, readyAccount, startOnpremApp, type OnpremApp } from "./lib.js";

const MAIN = path.resolve("src/main.ts");
const TSX = path.resolve("node_modules/.bin/tsx");

/** A license signed with a key of the test's own (for dates the vendor API would not issue). */
function ownLicense(notBefore: Date, notAfter: Date) {
  const pair = generateKeyPairSync("ed25519");
  const key = { privateKey: pair.privateKey, publicKey: pair.publicKey, keyId: keyIdOf(pair.publicKey), file: null };
  const text = licenseText(
    signLicense(key, {
      license_id: randomUUID(),
      customer: "Old Customer",
      owner: { kind: "account", id: randomUUID() },
      hosts: 2,
      not_before: notBefore.toISOString(),
      not_after: notAfter.toISOString(),
      features: ["standard"],
      issued_at: notBefore.toISOString(),
    }),
  );
  return { text, publicPem: pair.publicKey.export({ type: "spki", format: "pem" }) as string };
}

describe("the on-premises edition's own license", () => {
  let vendor: OnpremApp;
  let dir: string;
  let licenseFile: string;
  let publicPem: string;
  let issued: { id: string; customer: string; hosts: number; not_after: string };

  before(async () => {
    vendor = await startOnpremApp();
    dir = await mkdtemp(path.join(tmpdir(), "onprem-license-"));
    // the vendor's platform issues a license and publishes its key
    const u = await readyAccount(vendor.t);
    issued = (await post(vendor.t, "/v1/onprem/licenses/trial", u.token, { customer: "Installed Co" })).json();
    licenseFile = path.join(dir, "license.json");
    await writeFile(licenseFile, (await get(vendor.t, `/v1/onprem/licenses/${issued.id}/file`, u.token)).body);
    publicPem = (await get(vendor.t, "/v1/onprem/license-key")).json().public_key_pem;
  });
  after(async () => {
    await vendor.close();
    await rm(dir, { recursive: true, force: true });
  });

  const refused = (env: Record<string, string>, pattern: RegExp) =>
    assert.throws(
      () => onpremConfig({ EDITION: "onprem", ...env }),
      (e: Error) => e instanceof ConfigError && pattern.test(e.message),
    );

  test("a valid license is verified at start-up and reported by /v1/edition", async () => {
    const onprem = await createTestApp({
      env: { EDITION: "onprem", LICENSE_FILE: licenseFile, ONPREM_LICENSE_PUBLIC_KEY: publicPem },
    });
    try {
      const res = await call(onprem.app, { url: "/v1/edition" });
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(res.json().license, {
        license_id: issued.id,
        customer: "Installed Co",
        hosts: issued.hosts,
        not_after: issued.not_after,
        valid: true,
      });
      assert.equal(res.json().edition, "onprem");
    } finally {
      await onprem.close();
    }
    // the public key may be given as base64 DER or as a file path too
    const der = (await get(vendor.t, "/v1/onprem/license-key")).json().public_key;
    const keyFile = path.join(dir, "vendor.pub");
    await writeFile(keyFile, publicPem);
    for (const key of [der, keyFile])
      assert.equal(
        onpremConfig({ EDITION: "onprem", LICENSE_FILE: licenseFile, ONPREM_LICENSE_PUBLIC_KEY: key }).installation
          ?.license.license_id,
        issued.id,
      );
    // the SaaS edition reads no license and reports none
    assert.equal((await get(vendor.t, "/v1/edition")).json().license, undefined);
    assert.equal(onpremConfig({ LICENSE_FILE: "/nonexistent" }).installation, null);
  });

  test("an altered, foreign, expired or missing license stops start-up naming LICENSE_FILE", async () => {
    const altered = path.join(dir, "altered.json");
    const doc = JSON.parse((await import("node:fs")).readFileSync(licenseFile, "utf8"));
    doc.license.hosts = 1000;
    await writeFile(altered, JSON.stringify(doc));
    refused({ LICENSE_FILE: altered, ONPREM_LICENSE_PUBLIC_KEY: publicPem }, /LICENSE_FILE .*altered/);

    const foreign = ownLicense(new Date(Date.now() - 1000), new Date(Date.now() + 86_400_000));
    const foreignFile = path.join(dir, "foreign.json");
    await writeFile(foreignFile, foreign.text);
    refused({ LICENSE_FILE: foreignFile, ONPREM_LICENSE_PUBLIC_KEY: publicPem }, /LICENSE_FILE .*signed by key/);
    // with its own key it verifies (the check is the key, not the file)
    assert.ok(
      onpremConfig({ EDITION: "onprem", LICENSE_FILE: foreignFile, ONPREM_LICENSE_PUBLIC_KEY: foreign.publicPem })
        .installation,
    );

    const expired = ownLicense(new Date(Date.now() - 90 * 86_400_000), new Date(Date.now() - 86_400_000));
    const expiredFile = path.join(dir, "expired.json");
    await writeFile(expiredFile, expired.text);
    refused({ LICENSE_FILE: expiredFile, ONPREM_LICENSE_PUBLIC_KEY: expired.publicPem }, /LICENSE_FILE .*expired at/);
    const early = ownLicense(new Date(Date.now() + 86_400_000), new Date(Date.now() + 90 * 86_400_000));
    const earlyFile = path.join(dir, "early.json");
    await writeFile(earlyFile, early.text);
    refused({ LICENSE_FILE: earlyFile, ONPREM_LICENSE_PUBLIC_KEY: early.publicPem }, /LICENSE_FILE .*not valid before/);

    refused(
      { LICENSE_FILE: path.join(dir, "none.json"), ONPREM_LICENSE_PUBLIC_KEY: publicPem },
      /LICENSE_FILE .*cannot be read/,
    );
    const junk = path.join(dir, "junk.json");
    await writeFile(junk, "not json");
    refused({ LICENSE_FILE: junk, ONPREM_LICENSE_PUBLIC_KEY: publicPem }, /LICENSE_FILE .*not JSON/);
    refused({ LICENSE_FILE: licenseFile }, /ONPREM_LICENSE_PUBLIC_KEY is required/);
    refused({ LICENSE_FILE: licenseFile, ONPREM_LICENSE_PUBLIC_KEY: "nope" }, /ONPREM_LICENSE_PUBLIC_KEY/);
  });

  test("/v1/edition says valid: false once the license's end has passed while running", () => {
    const ends = new Date(Date.now() - 1000).toISOString();
    const view = editionView({
      path: "/x",
      license: {
        license_id: "l",
        customer: "c",
        owner: { kind: "account", id: "a" },
        hosts: 1,
        not_before: new Date(Date.now() - 86_400_000).toISOString(),
        not_after: ends,
        features: [],
        issued_at: ends,
      },
    });
    assert.deepEqual(view(), { license_id: "l", customer: "c", hosts: 1, not_after: ends, valid: false });
  });

  test("the service refuses to start on an expired license with one line naming LICENSE_FILE (exit code 2)", async () => {
    const expired = ownLicense(new Date(Date.now() - 90 * 86_400_000), new Date(Date.now() - 86_400_000));
    const file = path.join(dir, "expired-main.json");
    await writeFile(file, expired.text);
    const db = await freshDatabase();
    const dataDir = await mkdtemp(path.join(tmpdir(), "onprem-main-"));
    try {
      const child = spawn(TSX, [MAIN], {
        env: {
          PATH: process.env.PATH!,
          LOG_LEVEL: "silent",
          DATABASE_URL: db.url,
          DATA_DIR: dataDir,
          PORT: "0",
          EDGE_PORT: "0",
          REGISTRY_PORT: "0",
          S3_PORT: "0",
          ROLES: "api",
          EDITION: "onprem",
          LICENSE_FILE: file,
          ONPREM_LICENSE_PUBLIC_KEY: expired.publicPem,
        },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let err = "";
      child.stderr.on("data", (d) => (err += d));
      const code = await new Promise<number | null>((resolve) => child.on("exit", (c) => resolve(c)));
      const lines = err
        .trim()
        .split("\n")
        .filter((l) => l && !l.startsWith("npm warn"));
      assert.equal(code, 2, err);
      assert.equal(lines.length, 1, err);
      assert.match(lines[0], /^configuration error: LICENSE_FILE .*expired at .*install a renewed license$/);
    } finally {
      await db.drop();
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
