import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { accountOwner } from "../../src/kernel/owner.js";
import { call, expectError, OPERATOR_TOKEN, scopedKey, signup, type TestApp } from "../helpers/app.js";
import { testImage } from "../helpers/images.js";
import { createAppsTestApp, httpGet } from "./lib.js";

/**
 * Linked apps: the operator deploys a pod on behalf of an e-mail user; the user's account sees it only under
 * /v1/linked-apps (read-only list, logs, restart of running or failed apps, 409 otherwise).
 */
describe("linked apps on real containers", () => {
  let t: TestApp;
  let user: { token: string; id: string; email: string };
  let other: { token: string; id: string; email: string };
  let v1: string;

  before(async () => {
    v1 = await testImage("TEST_IMAGE_HTTPD_V1");
    t = await createAppsTestApp({ env: { APPS_HEALTH_TIMEOUT_MS: "2000" } });
    user = await signup(t.app);
    other = await signup(t.app);
  });
  after(async () => {
    await t?.close(); // removes every container of its host
  });

  const deploy = async (pod: Record<string, unknown>, email = user.email) => {
    const res = await call(t.app, {
      method: "POST",
      url: "/v1/operator/linked-apps",
      token: OPERATOR_TOKEN,
      body: { email, service: "shop-builder", pod },
    });
    return res;
  };
  const restart = (token: string, id: string) =>
    call(t.app, { method: "POST", url: `/v1/linked-apps/pods/${id}/restart`, token });
  const logs = (token: string, id: string) =>
    call(t.app, { method: "POST", url: `/v1/linked-apps/pods/${id}/logs?tail=5`, token });

  /** polls the user's linked-apps list until the app satisfies `until` */
  async function waitLinked(id: string, until: (a: any) => boolean, ms = 30_000): Promise<any> {
    const deadline = Date.now() + ms;
    let last: any;
    while (Date.now() < deadline) {
      last = (await call(t.app, { url: "/v1/linked-apps", token: user.token })).json().find((a: any) => a.id === id);
      if (last && until(last)) return last;
      await new Promise((r) => setTimeout(r, 150));
    }
    assert.fail(`linked app ${id} did not reach the expected state; last: ${JSON.stringify(last)}`);
  }

  test("the operator deploys for an e-mail user; only the operator token may, and the e-mail must exist", async () => {
    const res = await deploy({ name: "shop-web", image: v1, port: 8080 });
    assert.equal(res.statusCode, 201, res.body);
    const app = res.json();
    assert.equal(app.linked_service, "shop-builder");
    assert.equal(app.linked_email, user.email);
    assert.equal(app.state, "creating");
    // the user's audit log records the operator's deploy (under the nil token id: no token of the user's)
    const { rows } = await t.db.query("SELECT token_id, action, target, status FROM audit_log WHERE account_id = $1", [
      user.id,
    ]);
    assert.deepEqual(
      rows.filter((r) => r.action === "operatorDeployLinkedApp"),
      [
        {
          token_id: "00000000-0000-0000-0000-000000000000",
          action: "operatorDeployLinkedApp",
          target: null,
          status: 201,
        },
      ],
    );
    expectError(await deploy({ name: "nobody", image: v1, port: 8080 }, "nobody-here@example.com"), 404, "not_found");
    const asUser = await call(t.app, {
      method: "POST",
      url: "/v1/operator/linked-apps",
      token: user.token,
      body: { email: user.email, service: "x", pod: { name: "sneaky", image: v1 } },
    });
    assert.ok([401, 403].includes(asUser.statusCode), asUser.body);
    expectError(await deploy({ name: "x", image: v1 }), 400, "bad_slug");

    const running = await waitLinked(app.id, (a) => a.state === "running");
    assert.equal((await httpGet(`http://${running.address}/`)).body, "v1\n");
  });

  test("the user lists it under /v1/linked-apps only; scopes; logs; another account sees nothing", async () => {
    const app = (await deploy({ name: "shop-list", image: v1, port: 8080 })).json();
    const listed = (await call(t.app, { url: "/v1/linked-apps", token: user.token })).json();
    assert.ok(listed.some((a: any) => a.id === app.id && a.linked_service === "shop-builder"));
    const pods = (await call(t.app, { url: "/v1/pods", token: user.token })).json();
    assert.ok(!pods.some((p: any) => p.id === app.id), "a linked app is not one of the user's pods");
    expectError(await call(t.app, { url: `/v1/pods/${app.id}`, token: user.token }), 404, "not_found");
    expectError(
      await call(t.app, { method: "POST", url: `/v1/pods/${app.id}/stop`, token: user.token }),
      404,
      "not_found",
    );

    const reader = await scopedKey(t.app, user.token, ["linked-apps:read"]);
    const writer = await scopedKey(t.app, user.token, ["linked-apps:write"]);
    const podsKey = await scopedKey(t.app, user.token, ["pods:*"]);
    const viaKey = await call(t.app, { url: "/v1/linked-apps", token: reader });
    assert.equal(viaKey.statusCode, 200);
    assert.ok(viaKey.json().some((a: any) => a.id === app.id));
    expectError(await call(t.app, { url: "/v1/linked-apps", token: podsKey }), 403, "scope_insufficient");
    expectError(await logs(reader, app.id), 403, "scope_insufficient");
    expectError(await restart(podsKey, app.id), 403, "scope_insufficient");

    await waitLinked(app.id, (a) => a.state === "running");
    // busybox httpd logs nothing by itself: the answer is a (possibly empty) list of lines
    const res = await logs(writer, app.id);
    assert.equal(res.statusCode, 200, res.body);
    assert.ok(Array.isArray(res.json().lines));

    assert.deepEqual((await call(t.app, { url: "/v1/linked-apps", token: other.token })).json(), []);
    expectError(await logs(other.token, app.id), 404, "not_found");
    expectError(await restart(other.token, app.id), 404, "not_found");
  });

  test("logs answer the app's last lines", async () => {
    const app = (
      await deploy({
        name: "shop-talk",
        image: v1,
        port: 8080,
        command: ["sh", "-c", "for i in 1 2 3 4 5 6 7 8; do echo line-$i; done; exec httpd -f -p 8080 -h /www"],
      })
    ).json();
    await waitLinked(app.id, (a) => a.state === "running");
    const res = await logs(user.token, app.id);
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json().lines, ["line-4", "line-5", "line-6", "line-7", "line-8"]);
  });

  test("restart: a running app rolls to a new generation (202); a failed one restarts too", async () => {
    const app = (await deploy({ name: "shop-again", image: v1, port: 8080 })).json();
    const before = await waitLinked(app.id, (a) => a.state === "running");
    const res = await restart(user.token, app.id);
    assert.equal(res.statusCode, 202, res.body);
    assert.equal(res.json().generation, before.generation + 1);
    const after = await waitLinked(
      app.id,
      (a) => a.state === "running" && a.serving_generation === before.generation + 1,
    );
    assert.equal((await httpGet(`http://${after.address}/`)).body, "v1\n");
    // the restart is a rollout like any other: the legacy deployment endpoint names the new generation
    const metrics = (await call(t.app, { url: `/v1/deployments/${app.id}/metrics`, token: user.token })).json();
    assert.equal(metrics.generation, before.generation + 1);

    const crasher = (await deploy({ name: "shop-crash", image: v1, command: ["sh", "-c", "echo bye; exit 2"] })).json();
    const failed = await waitLinked(crasher.id, (a) => a.state === "failed", 40_000);
    const again = await restart(user.token, crasher.id);
    assert.equal(again.statusCode, 202, again.body);
    assert.equal(again.json().generation, failed.generation + 1);
  });

  test("restart of an app that is creating or stopped is 409 invalid_state", async () => {
    // never answers on its port: stays creating
    const slow = (await deploy({ name: "shop-slow", image: v1, port: 8080, command: ["sleep", "600"] })).json();
    const creating = await restart(user.token, slow.id);
    expectError(creating, 409, "invalid_state");
    assert.match(creating.json().error.message, /creating/);

    // a paid app that billing paused (overdue) is stopped
    const credit = await call(t.app, {
      method: "POST",
      url: `/v1/operator/accounts/${user.id}/credit`,
      token: OPERATOR_TOKEN,
      body: { amount: 1000, currency: "KRW", reason: "linked test" },
    });
    assert.equal(credit.statusCode, 201, credit.body);
    const paid = (await deploy({ name: "shop-paid", image: v1, port: 8080, size: "micro" })).json();
    await waitLinked(paid.id, (a) => a.state === "running");
    const paused = await t.platform.kernel.pauseOwner(t.db, accountOwner(user.id), "linked test pause");
    assert.ok(paused.includes(paid.id));
    await waitLinked(paid.id, (a) => a.state === "stopped");
    expectError(await restart(user.token, paid.id), 409, "invalid_state");
  });
});
