import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { call, createTestApp, expectError, signup, type TestApp } from "../helpers/app.js";
import { connect, createRunning, waitFor } from "./lib.js";

/** The databases API on a real PostgreSQL server: allowlist, extensions, HA eligibility and stored settings. */

describe("databases API: settings", () => {
  let t: TestApp;
  let user: { token: string; id: string };
  let dev: any;
  before(async () => {
    t = await createTestApp({ startJobs: true });
    user = await signup(t.app);
    dev = await createRunning(t, user.token, { name: "app-db" });
  });
  after(async () => {
    await t.close();
  });

  test("allowlist: a bad CIDR is 400; an allowed address connects and another loopback source is refused", async () => {
    expectError(
      await call(t.app, {
        method: "PATCH",
        url: `/v1/databases/${dev.id}/allowlist`,
        token: user.token,
        body: { allowlist: [{ cidr: "10.0.0.300/8", label: "x" }] },
      }),
      400,
      "bad_cidr",
    );
    const res = await call(t.app, {
      method: "PATCH",
      url: `/v1/databases/${dev.id}/allowlist`,
      token: user.token,
      body: { allowlist: [{ cidr: "127.0.0.1/32", label: "me" }] },
    });
    assert.equal(res.statusCode, 202);
    await waitFor(
      t,
      user.token,
      dev.id,
      (d) => d.commands?.find((c: any) => c.id === res.json().command_id)?.status === "succeeded",
      30_000,
    );
    await assert.rejects(connect(dev.database_url, { from: "127.0.0.2" }));
    const ok = await connect(dev.database_url, { from: "127.0.0.1" });
    await ok.end();
    const open = await call(t.app, {
      method: "PATCH",
      url: `/v1/databases/${dev.id}/allowlist`,
      token: user.token,
      body: { allowlist: [] },
    });
    await waitFor(
      t,
      user.token,
      dev.id,
      (d) => d.commands?.find((c: any) => c.id === open.json().command_id)?.status === "succeeded",
      30_000,
    );
    (await connect(dev.database_url, { from: "127.0.0.2" })).end();
  });

  test("extensions: unknown names and pg_stat_statements on dev give 400; allowed ones are installed", async () => {
    expectError(
      await call(t.app, {
        method: "POST",
        url: `/v1/databases/${dev.id}/extensions`,
        token: user.token,
        body: { names: ["no_such_ext"] },
      }),
      400,
      "extension_not_allowed",
    );
    expectError(
      await call(t.app, {
        method: "POST",
        url: `/v1/databases/${dev.id}/extensions`,
        token: user.token,
        body: { names: ["pg_stat_statements"] },
      }),
      400,
      "extension_not_allowed",
    );
    const res = await call(t.app, {
      method: "POST",
      url: `/v1/databases/${dev.id}/extensions`,
      token: user.token,
      body: { names: ["citext"] },
    });
    assert.equal(res.statusCode, 202);
    const d = await waitFor(t, user.token, dev.id, (x) => x.extensions.includes("citext"), 30_000);
    assert.ok(d.extensions.includes("pgcrypto"), "defaults are ensured");
    const client = await connect(dev.database_url);
    assert.equal((await client.query("SELECT 1 FROM pg_extension WHERE extname = 'citext'")).rowCount, 1);
    await client.end();
  });

  test("HA needs basic or above; settings endpoints validate and store", async () => {
    expectError(
      await call(t.app, { method: "POST", url: `/v1/databases/${dev.id}/ha`, token: user.token }),
      400,
      "ha_not_supported",
    );
    const renamed = await call(t.app, {
      method: "PATCH",
      url: `/v1/databases/${dev.id}/rename`,
      token: user.token,
      body: { label: "Main DB" },
    });
    assert.equal(renamed.json().label, "Main DB");
    assert.equal(renamed.json().slug, "app-db");
    const storage = await call(t.app, {
      method: "PATCH",
      url: `/v1/databases/${dev.id}/storage`,
      token: user.token,
      body: { enabled: true, max_gb: 40, threshold_pct: 80 },
    });
    assert.equal(storage.json().storage.max_gb, 40);
    expectError(
      await call(t.app, {
        method: "PATCH",
        url: `/v1/databases/${dev.id}/storage`,
        token: user.token,
        body: { enabled: true, max_gb: 5 },
      }),
      400,
      "invalid_request",
    );
    const compute = await call(t.app, {
      method: "PATCH",
      url: `/v1/databases/${dev.id}/compute`,
      token: user.token,
      body: { enabled: true, min_size: "pro", max_size: "basic" },
    });
    expectError(compute, 400, "invalid_request");
    assert.deepEqual(
      (await call(t.app, { url: `/v1/databases/${dev.id}/attached-apps`, token: user.token })).json(),
      [],
    );
  });
});
