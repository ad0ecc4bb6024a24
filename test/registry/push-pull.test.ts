import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { call, createTestApp, expectError, scopedKey, signup, type TestApp } from "../helpers/app.js";
import { denied, Podman, unique } from "./lib.js";

interface Creds {
  registry: string;
  namespace: string;
  username: string;
  password: string;
  expires_at: string;
}

async function credentials(t: TestApp, token: string): Promise<Creds> {
  const res = await call(t.app, { method: "POST", url: "/v1/registry/credentials", token });
  assert.equal(res.statusCode, 201, res.body);
  return res.json();
}

describe("registry: push and pull through the platform's token authentication", () => {
  let t: TestApp;
  let podman: Podman;
  let alice: { token: string; id: string };
  let bob: { token: string; id: string };
  let a: Creds;
  let b: Creds;
  let local: string;
  let repo: string;
  let image: string;

  before(async () => {
    t = await createTestApp({ startJobs: true, env: { REGISTRY_PORT: "0" } });
    podman = await Podman.create();
    alice = await signup(t.app);
    bob = await signup(t.app);
    a = await credentials(t, alice.token);
    b = await credentials(t, bob.token);
    local = await podman.build();
    repo = unique("app");
    image = `${a.registry}/${a.namespace}/${repo}:1`;
    await podman.tag(local, image);
  });
  after(async () => {
    await podman?.cleanup();
    await t?.close();
  });

  test("credentials: loopback registry, the owner's own namespace, short-lived", () => {
    assert.match(a.registry, /^127\.0\.0\.1:\d+$/);
    assert.match(a.namespace, /^u-[0-9a-f]{12}$/);
    assert.equal(a.namespace, `u-${alice.id.replace(/-/g, "").slice(0, 12)}`);
    assert.notEqual(a.namespace, b.namespace);
    assert.notEqual(a.username, b.username);
    const ttl = new Date(a.expires_at).getTime() - Date.now();
    assert.ok(ttl > 3500_000 && ttl <= 3600_000, `ttl ${ttl}`);
  });

  test("the password is stored hashed, never as given", async () => {
    const { rows } = await t.db.query<{ password_hash: Buffer }>(
      "SELECT password_hash FROM registry_credentials WHERE username = $1",
      [a.username],
    );
    assert.equal(rows.length, 1);
    assert.equal(rows[0].password_hash.length, 32);
    assert.ok(!rows[0].password_hash.toString("utf8").includes(a.password));
  });

  test("podman login and push into the own namespace work", async () => {
    const login = await podman.login(a.registry, a.username, a.password);
    assert.equal(login.code, 0, login.stderr);
    const push = await podman.push(image);
    assert.equal(push.code, 0, push.stderr);
  });

  test("push into another owner's namespace is denied", async () => {
    const foreign = `${a.registry}/${b.namespace}/${unique("intruder")}:1`;
    await podman.tag(local, foreign);
    const push = await podman.push(foreign);
    assert.ok(denied(push), `push should be denied: ${push.code} ${push.stderr}`);
    // nor into the bare registry root, outside every namespace
    const root = `${a.registry}/${unique("rootless")}:1`;
    await podman.tag(local, root);
    assert.ok(denied(await podman.push(root)));
  });

  test("pull of another owner's image is denied; the owner pulls its own", async () => {
    const other = await Podman.create();
    try {
      assert.equal((await other.login(b.registry, b.username, b.password)).code, 0);
      const pull = await other.pull(image);
      assert.ok(denied(pull), `bob's pull of alice's image should be denied: ${pull.code} ${pull.stderr}`);
    } finally {
      await other.cleanup();
    }
    await podman.removeImage(image);
    const own = await podman.pull(image);
    assert.equal(own.code, 0, own.stderr);
  });

  test("garbage and expired credentials are refused at login", async () => {
    const fresh = await Podman.create();
    try {
      assert.notEqual((await fresh.login(a.registry, a.username, "not-the-password")).code, 0);
      assert.notEqual((await fresh.login(a.registry, "nobody", "garbage")).code, 0);
      const old = await credentials(t, alice.token);
      assert.equal((await fresh.login(old.registry, old.username, old.password)).code, 0);
      await t.db.query("UPDATE registry_credentials SET expires_at = now() - interval '1 second' WHERE username = $1", [
        old.username,
      ]);
      const late = await fresh.login(old.registry, old.username, old.password);
      assert.notEqual(late.code, 0);
      // and a push with them (a login podman remembered earlier) is refused too
      assert.ok(denied(await fresh.push(image)));
    } finally {
      await fresh.cleanup();
    }
  });

  test("GET /v1/registry lists the owner's repository and tag, and nothing of others", async () => {
    const res = await call(t.app, { url: "/v1/registry", token: alice.token });
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json();
    assert.equal(body.registry, a.registry);
    assert.equal(body.namespace, a.namespace);
    assert.deepEqual(body.repositories, [{ name: repo, image: `${a.registry}/${a.namespace}/${repo}`, tags: ["1"] }]);
    const theirs = await call(t.app, { url: "/v1/registry", token: bob.token });
    assert.deepEqual(theirs.json().repositories, []);
  });

  test("a key limited to one repository gets credentials for that repository only", async () => {
    const other = unique("other");
    const key = await scopedKey(t.app, alice.token, [`registry:write:${repo}`]);
    const limited = await credentials(t, key);
    const p = await Podman.create();
    try {
      assert.equal((await p.login(limited.registry, limited.username, limited.password)).code, 0);
      // another image (its own manifest), so deleting this tag later leaves tag 1
      const tag2 = `${a.registry}/${a.namespace}/${repo}:2`;
      await p.tag(await p.build(), tag2);
      const ok = await p.push(tag2);
      assert.equal(ok.code, 0, ok.stderr);
      const elsewhere = `${a.registry}/${a.namespace}/${other}:1`;
      await p.tag(local, elsewhere);
      assert.ok(denied(await p.push(elsewhere)));
    } finally {
      await p.cleanup();
    }
    const listed = await call(t.app, { url: "/v1/registry", token: key });
    assert.deepEqual(
      listed.json().repositories.map((r: { name: string }) => r.name),
      [repo],
    );
  });

  test("DELETE a tag removes it from the listing; a second delete is 404", async () => {
    const url = `/v1/registry/repositories/${repo}/tags/2`;
    const del = await call(t.app, { method: "DELETE", url, token: alice.token });
    assert.equal(del.statusCode, 204, del.body);
    const body = (await call(t.app, { url: "/v1/registry", token: alice.token })).json();
    assert.deepEqual(body.repositories[0].tags, ["1"]);
    expectError(await call(t.app, { method: "DELETE", url, token: alice.token }), 404, "not_found");
    // bob cannot reach alice's repository: his name resolves inside his own namespace
    expectError(
      await call(t.app, { method: "DELETE", url: `/v1/registry/repositories/${repo}/tags/1`, token: bob.token }),
      404,
      "not_found",
    );
  });
});
