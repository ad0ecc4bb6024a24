/**
 * The daily bound on invitations (ORG_INVITES_PER_DAY): an organization invites at most that many addresses in 24
 * hours; a request going over is 429 too_many_requests with Retry-After and invites nobody.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { call, createTestApp, expectError, type TestApp } from "../helpers/app.js";
import { makeOrg, type TestOrg } from "./lib.js";

let t: TestApp;
let org: TestOrg;

before(async () => {
  t = await createTestApp({ env: { ORG_INVITES_PER_DAY: "3" } });
  org = await makeOrg(t, { admins: 0, members: 0 });
});
after(async () => t?.close());

const invite = (emails: string[]) =>
  call(t.app, { method: "POST", url: "/v1/org/invites", token: org.owner.token, body: { emails } });

test("invitations beyond the daily bound are refused with 429 and Retry-After; nothing is created", async () => {
  const first = await invite(["a@limit.test", "b@limit.test"]);
  assert.equal(first.statusCode, 200, first.body);
  const over = await invite(["c@limit.test", "d@limit.test"]);
  expectError(over, 429, "too_many_requests");
  assert.equal(over.headers["retry-after"], "3600");
  const pending = await call(t.app, { url: "/v1/org/invites", token: org.owner.token });
  assert.equal(pending.json().items.length, 2);
  assert.equal((await invite(["c@limit.test"])).statusCode, 200);
  // a day later the bound is free again
  await t.db.query("UPDATE org_invites SET created_at = now() - interval '25 hours' WHERE org_id = $1", [org.id]);
  assert.equal((await invite(["d@limit.test", "e@limit.test"])).statusCode, 200);
});
