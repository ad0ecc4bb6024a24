import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { call, expectError, signup, type TestApp } from "../helpers/app.js";
import { run } from "../registry/lib.js";
import { contextTarGz, createBuild, createBuildsTestApp, rawTarGz, upload } from "./lib.js";

/**
 * The upload URL: a plain `curl -T` works once, before it expires, up to BUILD_MAX_SOURCE_MB; archives that
 * would write outside the build's directory (../, absolute paths, links pointing out), devices and archives
 * without the Dockerfile are refused, and the build fails saying why.
 */
describe("builds: the source upload", () => {
  let t: TestApp;
  let alice: { token: string; id: string };
  let dockerfileOnly: Buffer;

  before(async () => {
    t = await createBuildsTestApp({ env: { BUILD_MAX_SOURCE_MB: "1", BUILD_UPLOAD_TTL_SECONDS: "600" } });
    alice = await signup(t.app);
    dockerfileOnly = contextTarGz({ Dockerfile: "FROM scratch\n" });
  });
  after(async () => {
    await t?.close();
  });

  const get = async (id: string) => (await call(t.app, { url: `/v1/builds/${id}`, token: alice.token })).json();

  test("curl -T uploads once; a second use of the URL is refused", async () => {
    const build = await createBuild(t, alice.token);
    assert.equal(build.status, "awaiting_upload");
    assert.match(build.upload_url, new RegExp(`^http://[^/]+/v1/builds/${build.id}/source\\?token=[\\w-]{40,}$`));
    await t.app.listen({ port: 0, host: "127.0.0.1" });
    const port = (t.app.server.address() as { port: number }).port;
    const url = new URL(build.upload_url);
    const dir = await mkdtemp(path.join(os.tmpdir(), "buildtest-"));
    try {
      const file = path.join(dir, "src.tar.gz");
      await writeFile(file, contextTarGz({ Dockerfile: "FROM scratch\nCOPY index.html /\n", "index.html": "hi\n" }));
      const target = `http://127.0.0.1:${port}${url.pathname}${url.search}`;
      const curl = await run("curl", ["-sS", "-o", "-", "-w", "\n%{http_code}", "-T", file, target]);
      assert.equal(curl.code, 0, curl.stderr);
      assert.match(curl.stdout, /\n200$/, curl.stdout);
      const again = await run("curl", ["-sS", "-o", "-", "-w", "\n%{http_code}", "-T", file, target]);
      assert.match(again.stdout, /\n401$/, again.stdout);
      assert.match(again.stdout, /used already/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    const got = await get(build.id);
    assert.equal(got.status, "awaiting_upload");
    assert.ok(got.uploaded_at);
    assert.ok(got.source_bytes > 50);
  });

  test("a wrong token or an expired URL is refused and uploads nothing", async () => {
    const build = await createBuild(t, alice.token);
    const u = new URL(build.upload_url);
    expectError(await upload(t, `${u.origin}${u.pathname}?token=${"x".repeat(43)}`, dockerfileOnly), 401);
    await t.db.query("UPDATE builds SET upload_expires_at = now() - interval '1 second' WHERE id = $1", [build.id]);
    expectError(await upload(t, build.upload_url, dockerfileOnly), 401, "auth_required");
    expectError(await call(t.app, { method: "POST", url: `/v1/builds/${build.id}/start`, token: alice.token }), 409);
  });

  test("start before the upload is 409", async () => {
    const build = await createBuild(t, alice.token);
    const early = await call(t.app, { method: "POST", url: `/v1/builds/${build.id}/start`, token: alice.token });
    expectError(early, 409, "conflict");
    assert.match(early.json().error.message, /upload_url/);
  });

  const refused = async (archive: Buffer, message: RegExp, status = 400) => {
    const build = await createBuild(t, alice.token);
    const res = await upload(t, build.upload_url, archive);
    expectError(res, status);
    assert.match(res.json().error.message, message);
    const got = await get(build.id);
    assert.equal(got.status, "failed");
    assert.match(got.status_reason, /source upload refused/);
    assert.equal(existsSync(path.join(t.config.dataDir, "builds", build.id)), false);
    return build;
  };

  test("paths leaving the archive are refused, and nothing is written outside", async () => {
    const marker = `escape-${randomBytes(4).toString("hex")}`;
    await refused(
      rawTarGz([
        { name: "Dockerfile", content: "FROM scratch\n" },
        { name: `../../${marker}`, content: "x" },
      ]),
      /leaves the archive/,
    );
    assert.equal(existsSync(path.join(t.config.dataDir, marker)), false);
    assert.equal(existsSync(path.join(t.config.dataDir, "builds", marker)), false);
    await refused(rawTarGz([{ name: `/tmp/${marker}`, content: "x" }]), /leaves the archive/);
    assert.equal(existsSync(`/tmp/${marker}`), false);
    await refused(rawTarGz([{ name: "link", type: "2", linkname: "/etc" }]), /points outside/);
    await refused(rawTarGz([{ name: "a/link", type: "2", linkname: "../../etc" }]), /points outside/);
    await refused(rawTarGz([{ name: "hard", type: "1", linkname: "../outside" }]), /points outside/);
    await refused(rawTarGz([{ name: "dev", type: "3" }]), /not allowed/);
  });

  test("too large, not an archive, or no Dockerfile: refused, saying so", async () => {
    await refused(randomBytes(2 * 1024 * 1024), /larger than 1 MiB/, 413);
    await refused(Buffer.from("this is not a tar archive at all, not even close....".repeat(20)), /tar/);
    await refused(contextTarGz({ "README.md": "hello" }), /no file Dockerfile/);
    const build = await createBuild(t, alice.token, { dockerfile: "docker/Containerfile", context_path: "src" });
    const ok = await upload(t, build.upload_url, contextTarGz({ "src/docker/Containerfile": "FROM scratch\n" }));
    assert.equal(ok.statusCode, 200, ok.body);
    expectError(
      await call(t.app, {
        method: "POST",
        url: "/v1/builds",
        token: alice.token,
        body: { dockerfile: "../Dockerfile" },
      }),
      400,
      "invalid_request",
    );
  });

  test("a build cancelled while waiting for its start keeps no source", async () => {
    const build = await createBuild(t, alice.token);
    assert.equal((await upload(t, build.upload_url, dockerfileOnly)).statusCode, 200);
    assert.ok(existsSync(path.join(t.config.dataDir, "builds", build.id)));
    const res = await call(t.app, { method: "POST", url: `/v1/builds/${build.id}/cancel`, token: alice.token });
    assert.equal(res.json().status, "cancelled");
    const deadline = Date.now() + 5000;
    while (existsSync(path.join(t.config.dataDir, "builds", build.id)) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    assert.equal(existsSync(path.join(t.config.dataDir, "builds", build.id)), false);
  });
});
