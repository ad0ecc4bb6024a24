import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { call, createTestApp, expectError, signup, type TestApp } from "../helpers/app.js";
import { ProviderError } from "../../src/databases/provider/types.js";
import type { MeteredResource, MeteringSource } from "../../src/kernel/area.js";
import type { Owner } from "../../src/kernel/owner.js";

/**
 * The databases area as the kernel sees it: the metering source and pause/resume lifecycle billing
 * uses instead of the databases table, lookups by owner (not by creator), the audit row committed
 * with the change, and provider errors answering with catalog codes. Rows are written directly (no
 * servers): these hooks only read and change the store.
 */
describe("databases: kernel hooks, owners and audit", { concurrency: false }, () => {
  let t: TestApp;
  let a: { token: string; id: string };
  let b: { token: string; id: string };
  let source: MeteringSource;

  const insert = async (o: {
    account: string;
    owner?: Owner;
    size?: string;
    state?: string;
    desired?: string;
    createdAt?: Date;
    reason?: string;
  }) => {
    const id = randomUUID();
    const slug = `k-${id.slice(0, 8)}`;
    const owner = o.owner ?? { kind: "account", id: o.account };
    await t.db.query(
      `INSERT INTO databases (id, account_id, owner_kind, owner_id, name, slug, version, size, storage_gb, pitr_retention_days, desired_state, state, status_reason, db_name, db_user, created_at)
       VALUES ($1, $2, $3, $4, $5, $5, 17, $6, 20, 7, $7, $8, $9, 'x', 'x', $10)`,
      [
        id,
        o.account,
        owner.kind,
        owner.id,
        slug,
        o.size ?? "basic",
        o.desired ?? (o.state === "paused" ? "paused" : "running"),
        o.state ?? "running",
        o.reason ?? null,
        o.createdAt ?? new Date(Date.now() - 60_000),
      ],
    );
    return { id, slug };
  };

  before(async () => {
    t = await createTestApp();
    a = await signup(t.app);
    b = await signup(t.app);
    source = t.platform.kernel.metering.find((s) => s.kind === "database")!;
  });
  after(async () => {
    await t?.close();
  });

  test("metering: running and paused instances created before the interval end, keyset-paged in (owner, id) order", async () => {
    const org: Owner = { kind: "org", id: randomUUID() };
    const expected = [
      await insert({ account: a.id }),
      await insert({ account: a.id, size: "dev" }),
      await insert({ account: a.id, state: "paused" }),
      await insert({ account: b.id }),
      await insert({ account: a.id, owner: org }),
      await insert({ account: b.id, owner: org, state: "paused" }),
    ].map((r) => r.id);
    await insert({ account: a.id, state: "removed", desired: "removed" });
    await insert({ account: a.id, state: "creating" });
    await insert({ account: b.id, createdAt: new Date(Date.now() + 3_600_000) });

    const pages: MeteredResource[][] = [];
    let after: [string, string] | null = null;
    for (;;) {
      const page = await source.billable(t.db, { createdBefore: new Date(), after, limit: 2 });
      if (!page.length) break;
      pages.push(page);
      const last = page[page.length - 1];
      after = [`${last.owner.kind}:${last.owner.id}`, last.id];
    }
    const all = pages.flat();
    const key = (r: MeteredResource) => [r.owner.kind, r.owner.id, r.id].join(" ");
    assert.deepEqual(
      all.map(key),
      [...all].sort((x, y) => (key(x) < key(y) ? -1 : 1)).map(key),
      "(owner_kind, owner_id, id) order",
    );
    assert.deepEqual(
      all.map((r) => r.id).sort(),
      [...expected].sort(),
      "removed, creating and later rows left out; dev included",
    );
    const orgRow = all.find((r) => r.owner.kind === "org" && r.state === "paused")!;
    assert.deepEqual(
      { ...orgRow, id: "" },
      { id: "", owner: org, accountId: b.id, kind: "database", size: "basic", storageGb: 20, state: "paused" },
    );

    assert.deepEqual((await source.billableOf(t.db, org)).map((r) => r.id).sort(), expected.slice(4).sort());
    const names = await source.describe!(t.db, [expected[0], "not-a-uuid"]);
    assert.equal(names.size, 1);
    assert.match(names.get(expected[0])!.slug!, /^k-/);
  });

  test("lifecycle: pause stops the owner's running paid instances with the reason; resume restarts only those", async () => {
    const owner: Owner = { kind: "org", id: randomUUID() };
    const paid = await insert({ account: a.id, owner });
    const dev = await insert({ account: a.id, owner, size: "dev" });
    const stoppedByUser = await insert({ account: a.id, owner, size: "dev", state: "paused" });
    const elsewhere = await insert({ account: a.id });
    const get = async (id: string) =>
      (await t.db.query("SELECT desired_state, status_reason FROM databases WHERE id = $1", [id])).rows[0];
    const commands = async (id: string) =>
      (
        await t.db.query("SELECT kind FROM database_commands WHERE database_id = $1 ORDER BY created_at", [id])
      ).rows.map((r) => r.kind);

    assert.deepEqual(await t.platform.kernel.pauseOwner(t.db, owner, "overdue"), [paid.id]);
    assert.deepEqual(await get(paid.id), { desired_state: "paused", status_reason: "overdue" });
    assert.deepEqual(await commands(paid.id), ["stop"]);
    for (const r of [dev, stoppedByUser, elsewhere]) assert.deepEqual(await commands(r.id), [], "untouched");
    assert.equal((await get(elsewhere.id)).desired_state, "running");

    assert.deepEqual(await t.platform.kernel.resumeOwner(t.db, owner, "budget"), [], "another reason resumes nothing");
    assert.deepEqual(await t.platform.kernel.resumeOwner(t.db, owner, "overdue"), [paid.id]);
    assert.equal((await get(paid.id)).desired_state, "running");
    assert.equal((await get(stoppedByUser.id)).desired_state, "paused", "a user's own stop stays");
  });

  test("instances are found by owner: a row the account created for an organization is not the account's", async () => {
    const own = await insert({ account: a.id });
    const orgOwned = await insert({ account: a.id, owner: { kind: "org", id: randomUUID() } });
    const list = (await call(t.app, { url: "/v1/databases", token: a.token })).json().map((d: any) => d.id);
    assert.ok(list.includes(own.id));
    assert.ok(!list.includes(orgOwned.id));
    expectError(await call(t.app, { url: `/v1/databases/${orgOwned.id}`, token: a.token }), 404, "not_found");
    expectError(await call(t.app, { url: `/v1/databases/${own.slug}`, token: b.token }), 404, "not_found");
    assert.equal(
      await t.platform.kernel.permits("databases", { kind: "account", id: a.id }, own.slug, [own.id]),
      true,
      "slug resolves to the permitted id",
    );
    assert.equal(
      await t.platform.kernel.permits("databases", { kind: "account", id: b.id }, own.slug, [own.id]),
      false,
    );
  });

  test("a change commits with exactly one audit row; a refused one leaves its failure row and no command", async () => {
    const u = await signup(t.app);
    const r = await insert({ account: u.id });
    const res = await call(t.app, {
      method: "PATCH",
      url: `/v1/databases/${r.id}/rename`,
      token: u.token,
      body: { label: "Shop" },
    });
    assert.equal(res.statusCode, 200);
    assert.equal(res.json().label, "Shop");
    expectError(
      await call(t.app, { method: "POST", url: `/v1/databases/${r.id}/stop`, token: u.token }),
      400,
      "stop_not_supported",
    );
    const { rows } = await t.db.query(
      "SELECT action, target, status, owner_kind, owner_id FROM audit_log WHERE account_id = $1 AND target = $2 ORDER BY id",
      [u.id, r.id],
    );
    assert.deepEqual(rows, [
      { action: "renameDatabase", target: r.id, status: 200, owner_kind: "account", owner_id: u.id },
      { action: "stopDatabase", target: r.id, status: 400, owner_kind: "account", owner_id: u.id },
    ]);
    assert.equal((await t.db.query("SELECT 1 FROM database_commands WHERE database_id = $1", [r.id])).rowCount, 0);
  });

  test("provider errors map to catalog codes; server-side ones keep the host's details out", () => {
    const capacity = new ProviderError(
      "capacity",
      "this host already runs its limit of 20 database instances",
    ).toApiError();
    assert.deepEqual(
      [capacity.code, capacity.status, capacity.message],
      ["provision_failed", 503, "this host already runs its limit of 20 database instances"],
    );
    const cidr = new ProviderError("bad_cidr", "300.1.1.1/8 is not a CIDR").toApiError();
    assert.deepEqual([cidr.code, cidr.status, cidr.message], ["bad_cidr", 400, "300.1.1.1/8 is not a CIDR"]);
    const start = new ProviderError(
      "start_failed",
      "pg_ctl: could not start server, see /data/instances/x/log",
    ).toApiError();
    assert.equal(start.code, "service_unavailable");
    assert.doesNotMatch(start.message, /pg_ctl|\/data/);
  });
});
