import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { ApiError } from "../../src/http/errors.js";
import { accountOwner } from "../../src/kernel/owner.js";
import { call, createTestApp, expectError, scopedKey, signup, type TestApp } from "../helpers/app.js";
import { claims, denied, Podman, unique } from "./lib.js";

const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`;

async function rejects(p: Promise<unknown>, code: string, pattern?: RegExp): Promise<void> {
  await assert.rejects(p, (err: unknown) => {
    assert.ok(err instanceof ApiError, String(err));
    assert.equal(err.code, code);
    if (pattern) assert.match(err.message, pattern);
    return true;
  });
}

describe("registry: image access for deployments, scopes, the token endpoint", () => {
  let t: TestApp;
  let podman: Podman;
  let alice: { token: string; id: string };
  let bob: { token: string; id: string };
  let creds: { registry: string; namespace: string; username: string; password: string };
  let image: string;

  before(async () => {
    t = await createTestApp({ startJobs: true, env: { REGISTRY_PORT: "0" } });
    podman = await Podman.create();
    alice = await signup(t.app);
    bob = await signup(t.app);
    const res = await call(t.app, { method: "POST", url: "/v1/registry/credentials", token: alice.token });
    creds = res.json();
    image = `${creds.registry}/${creds.namespace}/${unique("web")}:1`;
    await podman.tag(await podman.build(), image);
    assert.equal((await podman.login(creds.registry, creds.username, creds.password)).code, 0);
    const push = await podman.push(image);
    assert.equal(push.code, 0, push.stderr);
  });
  after(async () => {
    await podman?.cleanup();
    await t?.close();
  });

  const access = () => t.platform.kernel.require("imageAccess");

  test("pullFor refuses an image of another owner's namespace, naming the namespace", async () => {
    await rejects(access().pullFor(accountOwner(bob.id), image), "image_forbidden", /namespace "u-[0-9a-f]{12}"/);
  });

  test("pullFor returns working pull-only credentials for the owner's own image", async () => {
    const pull = await access().pullFor(accountOwner(alice.id), image);
    assert.ok(pull);
    await podman.removeImage(image);
    const res = await podman.pull(image, `${pull.username}:${pull.password}`);
    assert.equal(res.code, 0, res.stderr);
    // pull only: the same credentials cannot push, not even to that repository
    const again = `${image.slice(0, image.lastIndexOf(":"))}:2`;
    await podman.tag(image, again);
    assert.ok(denied(await podman.push(again, `${pull.username}:${pull.password}`)));
    // the same image under localhost:<port> is the same registry
    const alias = image.replace("127.0.0.1", "localhost");
    assert.ok(await access().pullFor(accountOwner(alice.id), alias));
  });

  test("pullFor: malformed references are bad_image; public images need no credentials", async () => {
    for (const bad of ["", "UPPER/case", "nginx:", "a//b", "x:bad tag", "ghcr.io/", `${creds.registry}/`])
      await rejects(access().pullFor(accountOwner(alice.id), bad), "bad_image");
    for (const ok of ["nginx", "nginx:1.27", "library/nginx@sha256:" + "a".repeat(64), "ghcr.io/org/app:v1"])
      assert.equal(await access().pullFor(accountOwner(alice.id), ok), null, ok);
  });

  test("pullFor refuses the host's local store and other loopback registries", async () => {
    await rejects(access().pullFor(accountOwner(alice.id), "localhost/some-build:1"), "image_forbidden", /local/);
    await rejects(access().pullFor(accountOwner(alice.id), "127.0.0.1:1/x/y:1"), "image_forbidden", /loopback/);
    // nor an image at the registry's root, outside every namespace
    await rejects(access().pullFor(accountOwner(alice.id), `${creds.registry}/loose:1`), "image_forbidden");
  });

  test("the token endpoint grants only what the credentials allow", async () => {
    const own = `${creds.namespace}/${unique("x")}`;
    const theirs = "u-000000000000/app";
    const query = `service=platform-registry&scope=repository:${own}:pull,push&scope=repository:${theirs}:pull&scope=registry:catalog:*`;
    const res = await call(t.app, {
      url: `/v1/registry/token?${query}`,
      headers: { authorization: basic(creds.username, creds.password) },
    });
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json();
    assert.equal(body.token, body.access_token);
    assert.ok(body.expires_in > 0 && body.expires_in <= 300);
    const c = claims(body.token);
    assert.equal(c.sub, creds.username);
    assert.equal(c.aud, "platform-registry");
    assert.deepEqual(c.access, [{ type: "repository", name: own, actions: ["pull", "push"] }]);
    const header = JSON.parse(Buffer.from(body.token.split(".")[0], "base64url").toString());
    assert.equal(header.alg, "RS256");
    assert.equal(header.x5c.length, 1);
  });

  test("the token endpoint refuses missing, wrong and expired credentials, and another service", async () => {
    expectError(await call(t.app, { url: "/v1/registry/token?service=platform-registry" }), 401, "auth_required");
    expectError(
      await call(t.app, { url: "/v1/registry/token", headers: { authorization: basic(creds.username, "nope") } }),
      401,
      "auth_required",
    );
    expectError(
      await call(t.app, {
        url: "/v1/registry/token?service=docker.io",
        headers: { authorization: basic(creds.username, creds.password) },
      }),
      400,
      "invalid_request",
    );
    const fresh = (await call(t.app, { method: "POST", url: "/v1/registry/credentials", token: bob.token })).json();
    await t.db.query("UPDATE registry_credentials SET expires_at = now() - interval '1 minute' WHERE username = $1", [
      fresh.username,
    ]);
    const expired = await call(t.app, {
      url: "/v1/registry/token",
      headers: { authorization: basic(fresh.username, fresh.password) },
    });
    expectError(expired, 401, "auth_required");
    assert.match(expired.json().error.message, /expired/);
  });

  test("scoped keys need registry:read / registry:write", async () => {
    const readOnly = await scopedKey(t.app, alice.token, ["registry:read"]);
    const other = await scopedKey(t.app, alice.token, ["databases:*"]);
    expectError(
      await call(t.app, { method: "POST", url: "/v1/registry/credentials", token: readOnly }),
      403,
      "scope_insufficient",
    );
    expectError(await call(t.app, { url: "/v1/registry", token: other }), 403, "scope_insufficient");
    assert.equal((await call(t.app, { url: "/v1/registry", token: readOnly })).statusCode, 200);
    const writer = await scopedKey(t.app, alice.token, ["registry:write"]);
    assert.equal(
      (await call(t.app, { method: "POST", url: "/v1/registry/credentials", token: writer })).statusCode,
      201,
    );
    const limited = await scopedKey(t.app, alice.token, ["registry:write:some-repo"]);
    expectError(
      await call(t.app, { method: "DELETE", url: "/v1/registry/repositories/other-repo/tags/1", token: limited }),
      403,
      "scope_insufficient",
    );
  });

  test("the registry's signing key is created once and sealed in the store", async () => {
    const { rows } = await t.db.query<{ private_key: string; certificate: string }>(
      "SELECT private_key, certificate FROM registry_signing_keys",
    );
    assert.equal(rows.length, 1);
    assert.match(rows[0].private_key, /^enc:v1:/);
    assert.ok(!rows[0].private_key.includes("PRIVATE KEY"));
  });
});

describe("registry: without the docker-registry binary", () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp({
      startJobs: true,
      env: { REGISTRY_PORT: "0", REGISTRY_BIN: "/nonexistent/docker-registry" },
    });
  });
  after(async () => {
    await t?.close();
  });

  test("registry endpoints answer 503 registry_unavailable with the install command; the rest works", async () => {
    const user = await signup(t.app);
    for (const req of [
      { method: "POST" as const, url: "/v1/registry/credentials" },
      { method: "GET" as const, url: "/v1/registry" },
    ]) {
      const res = await call(t.app, { ...req, token: user.token });
      expectError(res, 503, "registry_unavailable");
      assert.match(res.json().error.message, /apt-get install docker-registry/);
    }
    assert.equal((await call(t.app, { url: "/v1/me", token: user.token })).statusCode, 200);
    // images of other registries still deploy
    assert.equal(await t.platform.kernel.require("imageAccess").pullFor(accountOwner(user.id), "nginx:1"), null);
  });
});
