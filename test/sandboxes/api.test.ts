import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { call, createTestApp, expectError, signup, type TestApp } from "../helpers/app.js";
import { DEFAULT_SANDBOX_IMAGE } from "../../src/sandboxes/service.js";
import { ownerNetworkName } from "../../src/runtime/index.js";
import { cleanupSandboxes, containerExists, exec, hostId, networkExists, podman, post } from "./lib.js";

/**
 * Sandboxes through HTTP on real containers: creation with its defaults and validation, exec with its
 * output and time bounds, deletion, and networking (none unless asked; an asked-for network is the
 * owner's, isolated from other owners').
 */
describe("sandboxes API: create, exec, delete, network", () => {
  let t: TestApp;
  let user: { token: string; id: string };
  let server: http.Server;
  let port: number;

  before(async () => {
    t = await createTestApp({ env: { APPS_ALLOW_LOCAL_IMAGES: "1" } }); // the host store holds the test images
    user = await signup(t.app);
    // a service on every interface of the host: what a sandbox with a network may reach through its gateway
    server = http.createServer((_req, res) => res.end("host says hi\n"));
    await new Promise<void>((r) => server.listen(0, "0.0.0.0", r));
    port = (server.address() as AddressInfo).port;
  });
  after(async () => {
    server.close();
    await cleanupSandboxes(t.db, hostId(t));
    await t.close();
  });

  test("create starts a busybox sandbox with defaults; exec runs commands; delete removes the container", async () => {
    const started = Date.now();
    const res = await post(t, user.token, "/v1/sandboxes");
    assert.equal(res.statusCode, 201, res.body);
    const sb = res.json();
    assert.equal(sb.state, "running");
    assert.equal(sb.image, DEFAULT_SANDBOX_IMAGE);
    assert.equal(sb.network, false);
    assert.equal(sb.timeout_s, 300);
    assert.equal(sb.state_reason, null);
    const life = Date.parse(sb.expires_at) - Date.parse(sb.created_at);
    assert.equal(life, 300_000);
    assert.ok(containerExists(sb.id));
    const first = await exec(t, user.token, sb.id, ["sh", "-c", "echo hello; echo oops >&2; id -u; pwd; exit 7"]);
    console.log(`# create-to-first-exec ${Date.now() - started} ms`);
    assert.equal(first.statusCode, 200, first.body);
    assert.deepEqual(first.json(), {
      exit_code: 7,
      stdout: "hello\n0\n/root\n",
      stderr: "oops\n",
      truncated: false,
      timed_out: false,
    });
    // the container's limits and its timeout, as podman has them
    const i = JSON.parse(podman("container", "inspect", `sbx-${sb.id}`))[0];
    assert.equal(i.HostConfig.Memory, 512 * 1024 * 1024);
    assert.equal(i.HostConfig.PidsLimit, 256);
    assert.equal(i.HostConfig.AutoRemove, true);
    assert.ok(i.Config.Timeout > 290 && i.Config.Timeout <= 300, `timeout ${i.Config.Timeout}`);

    // files persist between execs of one sandbox
    await exec(t, user.token, sb.id, ["sh", "-c", "echo kept > /tmp/f"]);
    assert.equal((await exec(t, user.token, sb.id, ["cat", "/tmp/f"])).json().stdout, "kept\n");

    const big = (await exec(t, user.token, sb.id, ["sh", "-c", "yes | head -c 100000"])).json();
    assert.equal(big.stdout.length, 64 * 1024);
    assert.equal(big.truncated, true);
    const slow = (await exec(t, user.token, sb.id, ["sh", "-c", "echo begun; sleep 30"], 1)).json();
    assert.deepEqual(slow, { exit_code: 124, stdout: "begun\n", stderr: "", truncated: true, timed_out: true });
    assert.equal((await exec(t, user.token, sb.id, ["no-such-command"])).json().exit_code, 127);

    const listed = (await call(t.app, { url: "/v1/sandboxes", token: user.token })).json();
    assert.deepEqual(
      listed.map((s: { id: string }) => s.id),
      [sb.id],
    );
    assert.equal((await call(t.app, { url: `/v1/sandboxes/${sb.id}`, token: user.token })).json().state, "running");

    const del = await call(t.app, { method: "DELETE", url: `/v1/sandboxes/${sb.id}`, token: user.token });
    assert.equal(del.statusCode, 200, del.body);
    assert.equal(del.json().state, "removed");
    assert.equal(containerExists(sb.id), false);
    expectError(await exec(t, user.token, sb.id, ["true"]), 409, "conflict");
    assert.equal((await call(t.app, { url: `/v1/sandboxes/${sb.id}`, token: user.token })).json().state, "removed");
    assert.deepEqual((await call(t.app, { url: "/v1/sandboxes", token: user.token })).json(), []);
    // deleting again answers the same
    const again = await call(t.app, { method: "DELETE", url: `/v1/sandboxes/${sb.id}`, token: user.token });
    assert.equal(again.json().state, "removed");
    const audit = await t.db.query("SELECT action, status FROM audit_log WHERE account_id = $1 ORDER BY id", [user.id]);
    const actions = audit.rows.map((r) => `${r.action} ${r.status}`);
    assert.ok(actions.includes("createSandbox 201") && actions.includes("deleteSandbox 200"), actions.join(", "));
  });

  test("no network by default: only loopback, the host unreachable; network: true joins the owner's isolated network", async () => {
    const reach = `ls /sys/class/net | tr '\\n' ' '; gw=$(ip route | awk '/default/ {print $3}'); echo "gw=$gw"; timeout 5 wget -q -O - http://\${gw:-10.89.0.1}:${port}/`;
    const closed = (await post(t, user.token, "/v1/sandboxes", { timeout_s: 60 })).json();
    const out = (await exec(t, user.token, closed.id, ["sh", "-c", reach])).json();
    assert.match(out.stdout, /^lo gw=\n$/);
    assert.notEqual(out.exit_code, 0, "nothing outside the sandbox answers");

    const open = (await post(t, user.token, "/v1/sandboxes", { timeout_s: 60, network: true })).json();
    assert.equal(open.network, true);
    assert.ok(networkExists(ownerNetworkName({ kind: "account", id: user.id })), "the owner's network");
    const opened = (await exec(t, user.token, open.id, ["sh", "-c", reach])).json();
    assert.equal(opened.exit_code, 0, JSON.stringify(opened));
    assert.match(opened.stdout, /host says hi/);

    // the same owner's networked sandboxes reach each other; another owner's do not
    const mate = (await post(t, user.token, "/v1/sandboxes", { timeout_s: 60, network: true })).json();
    const stranger = await signup(t.app);
    const theirs = (await post(t, stranger.token, "/v1/sandboxes", { timeout_s: 60, network: true })).json();
    const ip = (await exec(t, user.token, mate.id, ["sh", "-c", "ip -4 -o addr show eth0 | awk '{print $4}'"]))
      .json()
      .stdout.trim()
      .split("/")[0];
    await exec(t, user.token, mate.id, ["sh", "-c", "mkdir -p /w && echo x > /w/i && (httpd -p 8080 -h /w &)"]);
    const get = ["timeout", "3", "wget", "-q", "-O", "-", `http://${ip}:8080/i`];
    assert.equal((await exec(t, user.token, open.id, get)).json().stdout, "x\n");
    const cross = (await exec(t, stranger.token, theirs.id, get)).json();
    assert.notEqual(cross.exit_code, 0, `another owner's network is isolated: ${JSON.stringify(cross)}`);

    for (const s of [closed, open, mate])
      await call(t.app, { method: "DELETE", url: `/v1/sandboxes/${s.id}`, token: user.token });
    await call(t.app, { method: "DELETE", url: `/v1/sandboxes/${theirs.id}`, token: stranger.token });
  });

  test("validation: timeout_s 10..3600, image references, exec bodies", async () => {
    expectError(await post(t, user.token, "/v1/sandboxes", { timeout_s: 9 }), 400, "invalid_request");
    expectError(await post(t, user.token, "/v1/sandboxes", { timeout_s: 3601 }), 400, "invalid_request");
    expectError(await post(t, user.token, "/v1/sandboxes", { image: "--privileged" }), 400, "bad_image");
    expectError(await post(t, user.token, "/v1/sandboxes", { cpus: 4 }), 400, "invalid_request");
    expectError(
      await post(t, user.token, "/v1/sandboxes", { image: "localhost/platform-test/absent:1", timeout_s: 10 }),
      400,
      "bad_image",
    );
    const sb = (await post(t, user.token, "/v1/sandboxes", { timeout_s: 30 })).json();
    expectError(await post(t, user.token, `/v1/sandboxes/${sb.id}/exec`, { command: [] }), 400, "invalid_request");
    expectError(await post(t, user.token, `/v1/sandboxes/${sb.id}/exec`, { command: "ls" }), 400, "invalid_request");
    expectError(await exec(t, user.token, "not-a-uuid", ["true"]), 404, "not_found");
    expectError(await exec(t, user.token, "00000000-0000-4000-8000-000000000000", ["true"]), 404, "not_found");
    // a failed creation leaves no container and no running sandbox behind
    const listed = (await call(t.app, { url: "/v1/sandboxes", token: user.token })).json();
    assert.deepEqual(
      listed.map((s: { id: string }) => s.id),
      [sb.id],
    );
    await call(t.app, { method: "DELETE", url: `/v1/sandboxes/${sb.id}`, token: user.token });
  });
});
