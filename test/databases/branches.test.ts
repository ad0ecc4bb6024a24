import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { call, createTestApp, expectError, signup, type TestApp } from "../helpers/app.js";
import { connect, connectError, sleep, waitCommand, waitFor } from "./lib.js";
import { readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { databasesArea, type DatabasesState } from "../../src/databases/module.js";

/**
 * Database branches through the API on real servers (issue 30), checked with psql: a branch at now and at a past
 * moment holds exactly the parent's rows of that moment; the parent takes writes during branching without an error;
 * reset brings a branch back to its parent; the restore rules' time errors; a parent with branches is not deleted.
 */
const run = promisify(execFile);

/** Rows as psql prints them (unaligned, tuples only), one string each. */
async function psql(url: string, sql: string): Promise<string[]> {
  const { stdout } = await run("psql", [url, "-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-c", sql], {
    env: { ...process.env, PGCONNECT_TIMEOUT: "10" },
  });
  return stdout.split("\n").filter((l) => l !== "");
}
const numbers = async (url: string, table: string) =>
  (await psql(url, `SELECT n FROM ${table} ORDER BY n`)).map(Number);

describe("databases: branches", { concurrency: false }, () => {
  let t: TestApp;
  let user: { token: string };
  let parent: any;
  let branch: any;
  const api = (method: "GET" | "POST" | "DELETE", url: string, body?: unknown) =>
    call(t.app, { method, url, token: user.token, body });
  const branchOf = async (body: Record<string, unknown>) => {
    const res = await api("POST", `/v1/databases/${parent.id}/branches`, body);
    assert.equal(res.statusCode, 201, res.body);
    const made = res.json();
    await waitCommand(t, user.token, made.id, made.command_id, 120_000);
    // a detail reads the row, then the commands: the one that saw the command done may hold the row of just before
    const d = await waitFor(t, user.token, made.id, (x) => x.state === "running", 10_000);
    return { ...made, ...d, database_url: made.database_url };
  };

  /** how the copy was made (the command's result: live or recovery, reflink or copy) */
  const how = async (commandId: string) =>
    (await t.db.query("SELECT result FROM database_commands WHERE id = $1", [commandId])).rows[0].result;

  before(async () => {
    t = await createTestApp({ startJobs: true });
    user = await signup(t.app);
    const res = await api("POST", "/v1/databases", { name: "br-parent" });
    assert.equal(res.statusCode, 201, res.body);
    parent = res.json();
    // a base backup follows provisioning: the start of the moments a branch can be made at
    await waitFor(
      t,
      user.token,
      parent.id,
      (d) => d.state === "running" && d.backups?.some((b: any) => b.kind === "base"),
    );
    await psql(parent.database_url, "CREATE TABLE t (n int PRIMARY KEY); INSERT INTO t SELECT generate_series(1, 5)");
  });
  after(async () => {
    await t?.close();
  });

  test("a branch at now holds exactly the parent's rows while the parent keeps taking writes", async () => {
    // a writer on the parent for the whole branching: each insert is its own commit, in order
    const writer = await connect(parent.database_url);
    const committed: number[] = [];
    const errors: string[] = [];
    let writing = true;
    const loop = (async () => {
      for (let n = 1000; writing; n++) {
        await writer.query("INSERT INTO t VALUES ($1)", [n]).then(
          () => committed.push(n),
          (err: Error) => errors.push(err.message),
        );
        await sleep(5);
      }
    })();
    await sleep(200);
    const beforeBranch = committed.length;
    branch = await branchOf({ name: "br-now" });
    const afterBranch = committed.length;
    writing = false;
    await loop;
    await writer.end();
    assert.deepEqual(errors, [], "the parent took every write during branching");
    assert.ok(afterBranch > beforeBranch, "writes went on while the branch was made");

    assert.equal(branch.parent_id, parent.id);
    assert.ok(branch.branched_at, "branched_at is set once the copy is made");
    assert.equal((await how(branch.command_id)).method, "live", "a running parent is copied live, not from backups");
    const rows = await numbers(branch.database_url, "t");
    // exactly the parent at one moment: the first rows, and a gap-free prefix of the writer's, with every write
    // committed before the branch was asked for
    const written = rows.filter((n) => n >= 1000);
    assert.deepEqual(rows.slice(0, 5), [1, 2, 3, 4, 5]);
    assert.deepEqual(written, committed.slice(0, written.length), "a consistent prefix of the parent's commits");
    assert.ok(written.length >= beforeBranch, `${written.length} rows in the branch, ${beforeBranch} committed before`);

    // its own credentials: new passwords, the parent's are refused there; its own writes stay its own
    assert.notEqual(new URL(branch.database_url).password, new URL(parent.database_url).password);
    assert.notEqual(branch.port, parent.port);
    const parentPassword = decodeURIComponent(new URL(parent.database_url).password);
    assert.ok(
      await connectError(branch.database_url, parentPassword),
      "the parent's password does not open the branch",
    );
    await psql(branch.database_url, "INSERT INTO t VALUES (-1)");
    assert.ok(!(await numbers(parent.database_url, "t")).includes(-1));

    const listed = (await api("GET", `/v1/databases/${parent.id}/branches`)).json();
    assert.deepEqual(
      listed.map((b: any) => [b.id, b.parent_id]),
      [[branch.id, parent.id]],
    );
    assert.equal((await api("GET", `/v1/databases/${parent.id}`)).json().parent_id, null);
  });

  test("a branch at a past moment holds exactly the rows committed before it", async () => {
    await psql(parent.database_url, "CREATE TABLE marks (n int); INSERT INTO marks SELECT generate_series(1, 3)");
    await sleep(400);
    const noted = new Date();
    await sleep(400);
    await psql(parent.database_url, "INSERT INTO marks SELECT generate_series(4, 6)");
    const past = await branchOf({ at: noted.toISOString() });
    assert.equal(past.branched_at, noted.toISOString());
    assert.equal((await how(past.command_id)).method, "recovery");
    assert.deepEqual(await numbers(past.database_url, "marks"), [1, 2, 3]);
    assert.deepEqual(await numbers(parent.database_url, "marks"), [1, 2, 3, 4, 5, 6]);
    const del = await api("DELETE", `/v1/databases/${past.id}`);
    assert.equal(del.statusCode, 202, del.body);
    await waitCommand(t, user.token, past.id, del.json().command_id);
  });

  test("reset brings a branch back to its parent's current state, same URL and password", async () => {
    await psql(parent.database_url, "INSERT INTO t VALUES (5000), (5001)");
    const res = await api("POST", `/v1/databases/${branch.id}/reset`);
    assert.equal(res.statusCode, 202, res.body);
    await waitCommand(t, user.token, branch.id, res.json().command_id, 120_000);
    assert.deepEqual(await numbers(branch.database_url, "t"), await numbers(parent.database_url, "t"));
    expectError(await api("POST", `/v1/databases/${parent.id}/reset`), 409, "not_a_branch");
  });

  test("a copy cut short by a kill -9 (half a directory, no command left) is made again by the reconciler", async () => {
    // what a kill -9 mid-copy leaves: the server down, the record not provisioned, a half-copied directory, the row
    // creating and no open command (its job lost)
    const provider = t.platform.state<DatabasesState>("databases").provider;
    await provider.stop(branch.id);
    const instanceDir = path.join(t.platform.config.dataDir, "instances", branch.id);
    const record = JSON.parse(await readFile(path.join(instanceDir, "instance.json"), "utf8"));
    await writeFile(path.join(instanceDir, "instance.json"), JSON.stringify({ ...record, provisioned: false }));
    await rm(path.join(instanceDir, "nodes", "a", "base"), { recursive: true });
    await t.db.query("UPDATE databases SET state = 'creating' WHERE id = $1", [branch.id]);
    await t.db.query(
      "UPDATE database_commands SET status = 'failed' WHERE database_id = $1 AND status <> 'succeeded'",
      [branch.id],
    );
    await psql(parent.database_url, "INSERT INTO t VALUES (6000)");
    const reconcile = databasesArea.jobs!(t.platform, t.platform.state("databases")).find(
      (j) => j.name === "databases.reconcile",
    )!;
    await reconcile.handler({}, { id: "test", retryCount: 0 });
    const d = await waitFor(t, user.token, branch.id, (x) => x.state === "running", 120_000);
    const latest = d.commands.find((c: any) => c.kind !== "base_backup");
    assert.equal(latest.kind, "branch", "a branch is made again, not an empty database provisioned");
    assert.deepEqual(await numbers(branch.database_url, "t"), await numbers(parent.database_url, "t"));
  });

  test("times follow the restore rules", async () => {
    const at = (v: string) => api("POST", `/v1/databases/${parent.id}/branches`, { at: v });
    expectError(await at("yesterday"), 400, "bad_time");
    expectError(await at("2026-13-01T00:00:00Z"), 400, "bad_time");
    expectError(await at(new Date(Date.now() + 60_000).toISOString()), 400, "future_time");
    expectError(await at("2020-01-01T00:00:00Z"), 400, "out_of_retention");
    expectError(await api("POST", "/v1/databases/no-such-db/branches", {}), 404, "not_found");
  });

  test("a parent with branches is not deleted (409 naming them); without them it is", async () => {
    const refused = await api("DELETE", `/v1/databases/${parent.id}`);
    expectError(refused, 409, "has_branches");
    assert.match(refused.json().error.message, /br-now/);
    const del = await api("DELETE", `/v1/databases/${branch.id}`);
    assert.equal(del.statusCode, 202, del.body);
    await waitCommand(t, user.token, branch.id, del.json().command_id);
    assert.deepEqual((await api("GET", `/v1/databases/${parent.id}/branches`)).json(), []);
    assert.equal((await api("DELETE", `/v1/databases/${parent.id}`)).statusCode, 202);
  });
});
