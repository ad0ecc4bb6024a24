import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { X509Certificate, createPublicKey, verify } from "node:crypto";
import { parseImage, classify } from "../../src/registry/images.js";
import { grant, parseScopes, TokenSigner, basicCredentials } from "../../src/registry/token.js";
import { certificatePem, newSigningKey } from "../../src/registry/x509.js";
import { namespaceCandidates } from "../../src/registry/namespace.js";
import { run } from "./lib.js";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";

describe("registry building blocks", () => {
  test("image references parse as distribution's grammar writes them", () => {
    assert.deepEqual(parseImage("nginx"), { domain: null, path: "nginx", tag: null, digest: null });
    assert.deepEqual(parseImage("127.0.0.1:5000/u-abc/web:1"), {
      domain: "127.0.0.1:5000",
      path: "u-abc/web",
      tag: "1",
      digest: null,
    });
    assert.deepEqual(parseImage("localhost/app"), { domain: "localhost", path: "app", tag: null, digest: null });
    assert.equal(parseImage(`ghcr.io/a/b@sha256:${"f".repeat(64)}`)?.digest, `sha256:${"f".repeat(64)}`);
    assert.equal(parseImage("Example.COM/a/b")?.domain, "example.com");
    for (const bad of ["", "-x", "a/-b", "a/b:", "a/b:-x", "a b", "a@sha256:xyz", "host:99999999/a", "x".repeat(600)])
      assert.equal(parseImage(bad), null, bad);
  });

  test("classify tells the platform's registry, the local store, other loopback and public registries apart", () => {
    const ours = ["127.0.0.1:5123"];
    assert.equal(classify("127.0.0.1:5123/u-a/b", ours).kind, "ours");
    assert.equal(classify("localhost:5123/u-a/b", ours).kind, "ours");
    assert.equal(classify("localhost/b", ours).kind, "local");
    assert.equal(classify("127.0.0.2:80/u-a/b", ours).kind, "foreign_loopback");
    assert.equal(classify("[::1]:5000/u-a/b", ours).kind, "foreign_loopback");
    assert.equal(classify("quay.io/u-a/b", ours).kind, "public");
    assert.throws(() => classify("::", ours), /not a valid image reference/);
  });

  test("scopes parse, and grants keep only what the allowance holds", () => {
    const scopes = parseScopes(["repository:ns/a:pull,push repository:other/b:pull", "registry:catalog:*"]);
    assert.deepEqual(scopes, [
      { type: "repository", name: "ns/a", actions: ["pull", "push"] },
      { type: "repository", name: "other/b", actions: ["pull"] },
      { type: "registry", name: "catalog", actions: ["*"] },
    ]);
    // a port in the name (repository:host:5000/x:pull) keeps everything up to the last colon
    assert.equal(parseScopes(["repository:host:5000/x:pull"])[0].name, "host:5000/x");
    assert.deepEqual(grant(scopes, { namespace: "ns", repositories: null, actions: ["pull"] }), [
      { type: "repository", name: "ns/a", actions: ["pull"] },
    ]);
    assert.deepEqual(grant(scopes, { namespace: "ns", repositories: ["ns/z"], actions: ["pull", "push"] }), []);
    // a namespace is a whole path component: "ns" does not cover "ns2/..." nor "ns" itself
    assert.deepEqual(
      grant(parseScopes(["repository:ns2/a:pull", "repository:ns:pull"]), {
        namespace: "ns",
        repositories: null,
        actions: ["pull"],
      }),
      [],
    );
  });

  test("Basic credentials parse; anything else is none", () => {
    const h = `Basic ${Buffer.from("u:p:with:colons").toString("base64")}`;
    assert.deepEqual(basicCredentials(h), { username: "u", password: "p:with:colons" });
    assert.equal(basicCredentials("Bearer abc"), null);
    assert.equal(basicCredentials(undefined), null);
  });

  test("namespaces: a prefix per owner kind, longer names only on collision", () => {
    const id = "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0";
    assert.deepEqual(namespaceCandidates({ kind: "account", id }).slice(0, 2), [
      "u-0f1e2d3c4b5a",
      "u-0f1e2d3c4b5a6978",
    ]);
    assert.equal(namespaceCandidates({ kind: "org", id })[0], "o-0f1e2d3c4b5a");
    assert.equal(namespaceCandidates({ kind: "account", id }).at(-1), `u-${id.replace(/-/g, "")}`);
  });

  test("the signing certificate is a valid self-signed X.509 v3 CA that openssl accepts, and tokens verify with it", async () => {
    const key = await newSigningKey("test signer");
    const cert = new X509Certificate(certificatePem(key.certificate));
    assert.ok(cert.ca);
    assert.ok(cert.verify(cert.publicKey));
    assert.ok(new Date(cert.validTo).getTime() > Date.now() + 9 * 365 * 86_400_000);
    const dir = await mkdtemp(path.join(os.tmpdir(), "regcert-"));
    try {
      const file = path.join(dir, "c.pem");
      await writeFile(file, certificatePem(key.certificate));
      const res = await run("openssl", ["verify", "-CAfile", file, file]);
      assert.equal(res.code, 0, res.stderr);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    const { token } = new TokenSigner(key.privateKeyPem, key.certificate).sign("s", [], 60);
    const [h, c, sig] = token.split(".");
    const header = JSON.parse(Buffer.from(h, "base64url").toString());
    assert.equal(header.x5c[0], key.certificate);
    const pub = createPublicKey(cert.publicKey.export({ type: "spki", format: "pem" }));
    assert.ok(verify("sha256", Buffer.from(`${h}.${c}`), pub, Buffer.from(sig, "base64url")));
  });
});
