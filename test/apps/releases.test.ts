/**
 * Issue 29, releases: every change of what runs is a numbered release (what changed, who, when, outcome), and a
 * rollback to release 1 after releases 2 and 3 goes through the safe rollout as release 4.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { call, expectError, type TestApp } from "../helpers/app.js";
import { createPod, httpGet, waitPod } from "./lib.js";
import { command, setup, teardown } from "./checks-lib.js";

let t: TestApp;
let token: string;
let accountId: string;
let image: string;

before(async () => {
  const s = await setup("apps.releases.test");
  ({ t, image } = s);
  token = s.user.token;
  accountId = s.user.id;
});
after(() => teardown(t, token));

const serving = (p: any) => p.state === "running" && p.serving_generation === p.generation;

test("rollback to release 1 after releases 2 and 3", async () => {
  const pod = await createPod(t, token, { name: "rel", image, port: 8080, command: command({ body: "one" }) });
  await waitPod(t, token, pod.id, serving);
  const change = async (body: Record<string, unknown>) => {
    const res = await call(t.app, { method: "PATCH", url: `/v1/pods/${pod.id}`, token, body });
    assert.equal(res.statusCode, 200, res.body);
    return waitPod(t, token, pod.id, serving);
  };
  await change({ env: { GREETING: "hi" } });
  // a PATCH that changes nothing of what runs makes no release
  await change({ env: { GREETING: "hi" } });
  const third = await change({ command: command({ body: "three" }), deploy: { stop_grace_seconds: 3 } });
  assert.equal(third.release, 3);
  assert.equal((await httpGet(`http://${third.address}/`)).body, "three\n");

  const list = (await call(t.app, { url: `/v1/pods/${pod.id}/releases`, token })).json();
  assert.deepEqual(
    list.map((r: any) => [r.number, r.changed, r.outcome, r.created_by]),
    [
      [3, ["command", "deploy"], "serving", accountId],
      [2, ["env"], "superseded", accountId],
      [1, [], "superseded", accountId],
    ],
  );
  assert.equal(list[2].description, "created");
  assert.equal(list[1].description, "changed env");

  const back = await call(t.app, { method: "POST", url: `/v1/pods/${pod.id}/rollback`, token, body: { release: 1 } });
  assert.equal(back.statusCode, 202, back.body);
  assert.equal(back.json().release, 4);
  const done = await waitPod(t, token, pod.id, (p) => serving(p) && p.generation > third.generation);
  assert.equal((await httpGet(`http://${done.address}/`)).body, "one\n");
  assert.deepEqual(done.env, {});
  assert.equal(done.deploy.stop_grace_seconds, 10);
  const after4 = (await call(t.app, { url: `/v1/pods/${pod.id}/releases`, token })).json();
  assert.deepEqual(
    [after4[0].number, after4[0].description, after4[0].outcome, after4[0].changed],
    [4, "rollback to release 1", "serving", ["command", "env", "deploy"]],
  );

  // errors: an unknown release, the release it runs already, a bad body
  const rollback = (body: unknown) =>
    call(t.app, { method: "POST", url: `/v1/pods/${pod.id}/rollback`, token, body: body as any });
  expectError(await rollback({ release: 99 }), 404, "not_found");
  expectError(await rollback({ release: 4 }), 409, "conflict");
  expectError(await rollback({ release: "one" }), 400, "invalid_request");
  expectError(await call(t.app, { url: "/v1/pods/nope/releases", token }), 404, "not_found");
});
