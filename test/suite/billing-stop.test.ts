/**
 * Stop on exhausted (src/suite/billing/stop.ts): with it on, a member whose suite allowance is used up has their paid
 * company pods stopped (others' keep running, and what another reason stopped is never started by the suite); when
 * the allowance is back they start again by themselves. A real pod on podman, created at zero balance.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { call, expectError, type TestApp } from "../helpers/app.js";
import { testImage } from "../helpers/images.js";
import { createAppsTestApp } from "../apps/lib.js";
import { enforceOrg, SUITE_PAUSE_REASON } from "../../src/suite/billing/stop.js";
import { linkOf } from "../../src/suite/billing/repo.js";
import { requireSuite, suiteOf } from "../../src/suite/state.js";
import { makeSuiteOrg, orgHeaders, startFakeSuite, suiteEnv, type FakeSuite } from "./billing-lib.js";

let t: TestApp;
let suite: FakeSuite;
let image: string;

before(async () => {
  image = await testImage("TEST_IMAGE_HTTPD_V1");
  suite = await startFakeSuite();
  t = await createAppsTestApp({ env: suiteEnv(suite) });
});
after(async () => {
  await t?.close();
  await suite?.close();
});

/** Polls a company pod (X-Owner: org) until `until` holds (bounded). */
interface PodView {
  state: string;
  desired_state: string;
  state_reason: string | null;
}

async function waitPod(_t: TestApp, token: string, id: string, until: (p: PodView) => boolean, ms = 60_000) {
  const deadline = Date.now() + ms;
  let last: unknown;
  while (Date.now() < deadline) {
    const res = await call(t.app, { url: `/v1/pods/${id}`, token, headers: orgHeaders });
    last = res.json();
    if (res.statusCode === 200 && until(last as PodView)) return last as PodView;
    await new Promise((r) => setTimeout(r, 150));
  }
  assert.fail(`pod ${id} did not reach the expected state; last: ${JSON.stringify(last)}`);
}

describe("suite stop on exhausted", () => {
  test("an exhausted member's paid company pods stop, and start again when the allowance is back", async () => {
    const org = await makeSuiteOrg(t, suite, { members: 2 });
    const [m1, m2] = org.members;
    const pod = async (token: string, name: string) => {
      const res = await call(t.app, {
        method: "POST",
        url: "/v1/pods",
        token,
        headers: orgHeaders,
        body: { name, image, port: 8080, size: "micro" },
      });
      assert.equal(res.statusCode, 201, res.body); // paid, at zero balance: billed through the suite
      return res.json().id as string;
    };
    const p1 = await pod(m1.token, "suite-m1-web");
    const held = await pod(m1.token, "suite-m1-held");
    const p2 = await pod(m2.token, "suite-m2-web");
    // stopped by hand: the suite never starts it
    const stop = await call(t.app, {
      method: "POST",
      url: `/v1/pods/${held}/stop`,
      token: m1.token,
      headers: orgHeaders,
    });
    assert.ok(stop.statusCode < 300, stop.body);
    await waitPod(t, m1.token, p1, (p) => p.state === "running");

    const put = await call(t.app, {
      method: "PUT",
      url: "/v1/org/suite/billing",
      token: org.admins[0].token,
      body: { stop_on_exhausted: true },
    });
    assert.equal(put.statusCode, 200, put.body);
    const billing = requireSuite(suiteOf(t.platform)).billing;
    const link = (await linkOf(t.db, org.id))!;

    suite.billing.setAllowance(org.companyId, org.subject.get(m1.id)!, { limit: 1000, used: 1000 });
    const first = await enforceOrg(t.platform, billing, link);
    // the job the PUT sent may have paused it first; either way it is paused once, by the suite
    const stopped = await waitPod(t, m1.token, p1, (p) => p.state === "stopped");
    assert.equal(stopped.state_reason, SUITE_PAUSE_REASON);
    assert.ok(first.paused.every((id) => id === p1));
    assert.equal(
      (await call(t.app, { url: `/v1/pods/${p2}`, token: m2.token, headers: orgHeaders })).json().desired_state,
      "running",
    );
    expectError(
      await call(t.app, { method: "POST", url: `/v1/pods/${p1}/start`, token: m1.token, headers: orgHeaders }),
      409,
      "conflict",
    );
    const status = await call(t.app, { url: "/v1/org/suite/billing", token: org.admins[0].token });
    const s1 = status.json().members.find((m: { account_id: string }) => m.account_id === m1.id);
    assert.deepEqual([s1.paused, s1.paused_resources, s1.allowance.remaining_krw], [true, [p1], 0]);

    // still exhausted: nothing changes
    assert.deepEqual((await enforceOrg(t.platform, billing, link)).resumed, []);

    suite.billing.setAllowance(org.companyId, org.subject.get(m1.id)!, { limit: 1000, used: 0 });
    const back = await enforceOrg(t.platform, billing, link);
    assert.deepEqual(back.resumed, [p1]);
    const running = await waitPod(t, m1.token, p1, (p) => p.state === "running");
    assert.equal(running.state_reason, null);
    assert.equal(
      (await call(t.app, { url: `/v1/pods/${held}`, token: m1.token, headers: orgHeaders })).json().desired_state,
      "stopped",
    );
    const after = (await call(t.app, { url: "/v1/org/suite/billing", token: m1.token })).json().members[0];
    assert.deepEqual([after.paused, after.paused_resources], [false, []]);
  });
});
