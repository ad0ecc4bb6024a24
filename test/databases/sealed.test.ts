import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { call, createTestApp, signup, type TestApp } from "../helpers/app.js";
import { waitFor } from "./lib.js";

describe("database secrets at rest", () => {
  let t: TestApp;
  let user: { token: string; id: string };
  before(async () => {
    t = await createTestApp({ startJobs: true });
    user = await signup(t.app);
  });
  after(async () => {
    await t.close();
  });

  test("initial passwords are stored sealed, still provision the server, and the one-time reveal opens them", async () => {
    const created = await call(t.app, {
      method: "POST",
      url: "/v1/databases",
      token: user.token,
      body: { name: "sealed-db" },
    });
    assert.equal(created.statusCode, 201);
    const db = created.json();
    const { rows } = await t.db.query(
      "SELECT initial_password, initial_superuser_password FROM databases WHERE id = $1",
      [db.id],
    );
    for (const stored of [rows[0].initial_password, rows[0].initial_superuser_password]) {
      assert.match(stored, /^enc:v1:/);
      assert.ok(!stored.includes(db.password) && !stored.includes(db.superuser_password));
    }
    await waitFor(t, user.token, db.id, (d) => d.state === "running");
    const revealed = await call(t.app, {
      method: "POST",
      url: `/v1/databases/${db.id}/initial-credentials`,
      token: user.token,
    });
    assert.equal(revealed.statusCode, 200, revealed.body);
    assert.equal(revealed.json().password, db.password);
    assert.equal(revealed.json().superuser_password, db.superuser_password);
  });
});
