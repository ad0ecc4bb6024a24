/**
 * Two platform processes over one store and one Redis, each with its own DATA_DIR, as on two machines
 * (issue 18 and the hardening issue's two-process test). Real server processes, as in crash.test.ts.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { freePort } from "../../src/pgserver/cluster.js";
import { LocalDatabaseProvider } from "../../src/databases/provider/local/index.js";
import { TEST_SECRET_KEY, freshDatabase } from "../helpers/app.js";
import { connect } from "../databases/lib.js";
import { api, kill, launch, p50, sleep, startRedis, until, type Proc } from "./lib.js";

const OPERATOR = "operator-token-for-two-process-test";

test("two processes over one store and one Redis: work on a database runs on the host that holds it", async (t) => {
  const database = await freshDatabase();
  const store = new pg.Pool({ connectionString: database.url, max: 2 });
  const redis = await startRedis();
  if (!redis) t.diagnostic("redis-server is not installed: the shared rate limit is not checked (CI installs it)");
  const dirs = [
    mkdtempSync(path.join(tmpdir(), "host-a-")),
    mkdtempSync(path.join(tmpdir(), "host-b-")),
    mkdtempSync(path.join(tmpdir(), "host-c-")),
  ];
  for (const d of dirs) chmodSync(d, 0o755);
  const common = {
    // hosts over one store share the platform key (a host with another key is refused at start-up)
    DATABASE_URL: database.url,
    OPERATOR_TOKEN: OPERATOR,
    PLATFORM_SECRET_KEY: TEST_SECRET_KEY,
    HOST_HEARTBEAT_SECONDS: "1",
    HOST_MISSED_BEATS: "3",
    DB_MAX_INSTANCES: "5",
    ...(redis ? { REDIS_URL: redis.url } : {}),
  };
  const envA = { ...common, DATA_DIR: dirs[0], PORT: String(await freePort()), HOST_NAME: "host-a" };
  const envB = { ...common, DATA_DIR: dirs[1], PORT: String(await freePort()), HOST_NAME: "host-b" };
  // and a third, API-only process (ROLES=api), as on a machine that holds nothing
  const envC = { ...common, DATA_DIR: dirs[2], PORT: String(await freePort()), HOST_NAME: "api-only", ROLES: "api" };
  let A = launch("A", envA);
  const B = launch("B", envB);
  const C = launch("C", envC);
  const ids: string[] = [];
  const figures: Record<string, unknown> = {};
  try {
    for (const p of [A, B, C])
      await until(`process ${p.name} to answer`, async () =>
        (await api(p, "GET", "/v1/edition")).status === 200 ? true : undefined,
      );

    // hosts as records: both registered with every role and a fresh heartbeat; each knows which one it is
    // polled: a heartbeat is due every second and missed after three, which a process still starting on a loaded
    // machine can miss once (a CI run saw host-b unavailable for a moment)
    const hosts = await until(
      "both worker hosts registered and fresh",
      async () => {
        const list = (await api(A, "GET", "/v1/operator/hosts", OPERATOR)).json as any[];
        return list.length === 3 && list.every((h) => h.name === "api-only" || h.available) ? list : undefined;
      },
      30_000,
    );
    assert.equal(hosts.length, 3, JSON.stringify(hosts));
    const hostA = hosts.find((h) => h.name === "host-a");
    const hostB = hosts.find((h) => h.name === "host-b");
    assert.deepEqual(hosts.find((h) => h.name === "api-only").roles, ["api"]);
    assert.ok(hostA.local && !hostB.local && hostA.available && hostB.available);
    assert.deepEqual(hostA.roles, ["api", "worker", "edge", "s3"]);
    assert.equal(hostA.processes.length, 1);

    const { json: user } = await api(A, "POST", "/v1/auth/signup", undefined, {
      email: "two@example.com",
      password: "long enough pw",
    });

    // --- the hardening issue: what already holds across two API processes ---
    await t.test("a revoked key is refused by the other process at once", async () => {
      const key = (await api(A, "POST", "/v1/api-keys", user.token, { name: "shared", scopes: ["databases:read"] }))
        .json;
      assert.equal((await api(B, "GET", "/v1/databases", key.key)).status, 200);
      assert.equal((await api(A, "DELETE", `/v1/api-keys/${key.id}`, user.token)).status, 204);
      const revokedAt = Date.now();
      await until(
        "B to refuse the revoked key",
        async () => ((await api(B, "GET", "/v1/databases", key.key)).status === 401 ? true : undefined),
        2000,
        2,
      );
      figures.revocation_seen_by_other_ms = Date.now() - revokedAt;
    });

    await t.test("one Idempotency-Key gives one resource and one answer across both processes", async () => {
      const headers = { "idempotency-key": "two-processes-1" };
      const body = { name: "idempotent", scopes: ["databases:read"] };
      const [a, b] = await Promise.all([
        api(A, "POST", "/v1/api-keys", user.token, body, headers),
        api(B, "POST", "/v1/api-keys", user.token, body, headers),
      ]);
      assert.equal(a.status, 201);
      assert.equal(b.status, 201);
      assert.equal(a.json.id, b.json.id);
      const listed = (await api(B, "GET", "/v1/api-keys", user.token)).json.filter((k: any) => k.name === "idempotent");
      assert.equal(listed.length, 1);
    });

    await t.test("the rate limit is one limit over both processes", { skip: !redis && "no redis-server" }, async () => {
      const { json: burst } = await api(A, "POST", "/v1/auth/signup", undefined, {
        email: "burst@example.com",
        password: "long enough pw",
      });
      // one counter: alternating A and B within one second, each answer counts the other's hits too (1, 2, 3, ... not 1, 1, 2, 2, ...)
      const counted = await until(
        "ten alternating requests within one second",
        async () => {
          await until("the start of a second", async () => (Date.now() % 1000 < 20 ? true : undefined), 2000, 1);
          const window = Math.floor(Date.now() / 1000);
          const used: number[] = [];
          for (let i = 0; i < 10; i++) {
            const r = await api(i % 2 ? B : A, "GET", "/v1/me", burst.token);
            used.push(100 - Number(/r=(\d+)/.exec(r.headers.get("ratelimit") ?? "")?.[1]));
          }
          return Math.floor(Date.now() / 1000) === window ? used : undefined;
        },
        20_000,
        0,
      );
      assert.deepEqual(counted, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
      await sleep(1000);
      await until("the start of a second", async () => (Date.now() % 1000 < 20 ? true : undefined), 2000, 1);
      const first = Date.now();
      const res = await Promise.all(
        Array.from({ length: 300 }, (_, i) => api(i % 2 ? B : A, "GET", "/v1/me", burst.token)),
      );
      const windows = Math.floor(Date.now() / 1000) - Math.floor(first / 1000) + 1;
      const allowed = res.filter((r) => r.status === 200).length;
      assert.equal(allowed + res.filter((r) => r.status === 429).length, 300);
      assert.ok(allowed <= 100 * windows, `${allowed} allowed over ${windows} one-second windows`);
      if (windows === 1) assert.equal(allowed, 100);
      figures.rate_limit = `${allowed} of 300 allowed over ${windows} window(s), both processes`;
    });

    // --- issue 18: a database created through A is operated through B ---
    const created = await api(A, "POST", "/v1/databases", user.token, { name: "on-host-a" });
    assert.equal(created.status, 201, JSON.stringify(created.json));
    const db1 = created.json;
    ids.push(db1.id);
    const placed = await store.query("SELECT host_id FROM databases WHERE id = $1", [db1.id]);
    assert.equal(placed.rows[0].host_id, hostA.id, "placed on the host of the process that created it");
    const get = async (p: Proc, id: string) => (await api(p, "GET", `/v1/databases/${id}`, user.token)).json;
    const command = async (p: Proc, id: string, commandId: string) => {
      const cmd = await until(
        `command ${commandId}`,
        async () => {
          const c = (await get(p, id)).commands?.find((x: any) => x.id === commandId);
          return c && ["succeeded", "failed"].includes(c.status) ? c : undefined;
        },
        120_000,
        100,
      );
      assert.equal(cmd.status, "succeeded", `${cmd.kind}: ${cmd.error}`);
      return cmd;
    };
    await until("the database to run", async () => ((await get(B, db1.id)).state === "running" ? true : undefined));

    await t.test("through B: rotate-password, stop, start, backup and pooling run on A's host", async () => {
      const rotated = await api(B, "POST", `/v1/databases/${db1.id}/rotate-password`, user.token);
      assert.equal(rotated.status, 200, JSON.stringify(rotated.json));
      const c = await connect(db1.database_url, { password: rotated.json.password });
      await c.query("CREATE TABLE kept (v int); INSERT INTO kept VALUES (7)");
      await c.end();
      await assert.rejects(
        connect(db1.database_url, { password: db1.password }),
        "the old password is refused when rotate answers",
      );

      // the figure: a command sent through B, finished on A's host (rotate-password answers when it is applied)
      const times: number[] = [];
      let last = rotated.json.password;
      for (let i = 0; i < 20; i++) {
        const r = await api(B, "POST", `/v1/databases/${db1.id}/rotate-password`, user.token);
        assert.equal(r.status, 200, JSON.stringify(r.json));
        times.push(r.ms);
        last = r.json.password;
      }
      figures.rotate_through_b_p50_ms = p50(times);
      figures.rotate_through_b_max_ms = Math.max(...times);

      let t0 = Date.now();
      const stop = await api(B, "POST", `/v1/databases/${db1.id}/stop`, user.token);
      assert.equal(stop.status, 202);
      await command(B, db1.id, stop.json.command_id);
      figures.stop_through_b_ms = Date.now() - t0;
      assert.equal((await get(B, db1.id)).state, "paused");
      t0 = Date.now();
      const start = await api(B, "POST", `/v1/databases/${db1.id}/start`, user.token);
      assert.equal(start.status, 202);
      await command(B, db1.id, start.json.command_id);
      figures.start_through_b_ms = Date.now() - t0;

      const backup = await api(B, "POST", `/v1/databases/${db1.id}/backup`, user.token, { label: "through-b" });
      assert.equal(backup.status, 202);
      await command(B, db1.id, backup.json.command_id);
      const snap = (await get(B, db1.id)).backups.find((b: any) => b.label === "through-b");
      assert.ok(snap && snap.status === "complete", JSON.stringify(snap));

      const pool = await api(B, "PUT", `/v1/databases/${db1.id}/pool`, user.token, { enabled: true });
      if (pool.status === 503) {
        t.diagnostic("pgbouncer is not installed: pooling through B not checked");
      } else {
        assert.equal(pool.status, 202);
        await command(B, db1.id, pool.json.command_id);
        const pooled = (await api(B, "GET", `/v1/databases/${db1.id}/pool`, user.token)).json;
        assert.ok(pooled.enabled && pooled.pooled_url, JSON.stringify(pooled));
      }
      const again = await connect(db1.database_url, { password: last });
      assert.equal((await again.query("SELECT v FROM kept")).rows[0].v, 7);
      await again.end();
    });

    await t.test("an API-only process creates a database on a worker host and operates it there", async () => {
      const viaC = await api(C, "POST", "/v1/databases", user.token, { name: "via-api-only" });
      assert.equal(viaC.status, 201, JSON.stringify(viaC.json));
      ids.push(viaC.json.id);
      assert.ok(viaC.json.port > 0, "the holding host reserved the port before creation answered");
      const { rows } = await store.query("SELECT host_id FROM databases WHERE id = $1", [viaC.json.id]);
      assert.ok([hostA.id, hostB.id].includes(rows[0].host_id), "placed on a worker host");
      await until("it to run", async () => ((await get(C, viaC.json.id)).state === "running" ? true : undefined));
      const rotated = await api(C, "POST", `/v1/databases/${viaC.json.id}/rotate-password`, user.token);
      assert.equal(rotated.status, 200, JSON.stringify(rotated.json));
      const c = await connect(viaC.json.database_url, { password: rotated.json.password });
      assert.equal((await c.query("SELECT 1 AS one")).rows[0].one, 1);
      await c.end();
    });

    // a database on B, for the request a crash cuts
    const db2 = (await api(B, "POST", "/v1/databases", user.token, { name: "on-host-b" })).json;
    ids.push(db2.id);
    await until("the second database to run", async () =>
      (await get(A, db2.id)).state === "running" ? true : undefined,
    );

    await t.test(
      "a request cut by kill -9 is retried through the other process with the same key and answered within seconds",
      async () => {
        // B's worker is paused, so A's rotate-password is still waiting for it when A is killed
        B.child.kill("SIGSTOP");
        const headers = { "idempotency-key": "cut-by-a-crash" };
        const cut = api(A, "POST", `/v1/databases/${db2.id}/rotate-password`, user.token, undefined, headers).catch(
          () => null,
        );
        await sleep(1000);
        await kill(A, "SIGKILL");
        assert.equal(await cut, null, "the request was cut");
        B.child.kill("SIGCONT");
        const retried = await api(B, "POST", `/v1/databases/${db2.id}/rotate-password`, user.token, undefined, headers);
        figures.cut_request_retry_ms = retried.ms;
        assert.equal(retried.status, 200, JSON.stringify(retried.json));
        assert.ok(retried.ms < 10_000, `the retry waited ${retried.ms} ms`);
        const c = await connect(db2.database_url, { password: retried.json.password });
        await c.end();
      },
    );

    await t.test("A down: commands through B wait with host_unavailable; A back: they complete", async () => {
      const downAt = Date.now();
      await until(
        "B to see A unavailable",
        async () => {
          const h = ((await api(B, "GET", "/v1/operator/hosts", OPERATOR)).json as any[]).find(
            (x) => x.id === hostA.id,
          );
          return h.available ? undefined : true;
        },
        20_000,
        100,
      );
      figures.host_unavailable_after_ms = Date.now() - downAt;
      const stop = await api(B, "POST", `/v1/databases/${db1.id}/stop`, user.token);
      assert.equal(stop.status, 202);
      const waiting = (await get(B, db1.id)).commands.find((c: any) => c.id === stop.json.command_id);
      assert.equal(waiting.status, "queued");
      assert.match(waiting.error, /^host_unavailable/);
      const rotate = await api(B, "POST", `/v1/databases/${db1.id}/rotate-password`, user.token);
      assert.equal(rotate.status, 503);
      assert.equal(rotate.json.error.code, "host_unavailable");
      assert.ok(rotate.ms < 3000, `refused in ${rotate.ms} ms`);
      await sleep(1500);
      assert.equal(
        (await get(B, db1.id)).commands.find((c: any) => c.id === stop.json.command_id).status,
        "queued",
        "nothing ran it elsewhere",
      );

      const restartedAt = Date.now();
      A = launch("A", envA);
      await command(B, db1.id, stop.json.command_id);
      figures.queued_stop_done_after_restart_ms = Date.now() - restartedAt;
      assert.equal((await get(B, db1.id)).state, "paused");
      const hostsNow = (await api(B, "GET", "/v1/operator/hosts", OPERATOR)).json as any[];
      assert.equal(hostsNow.length, 3, "the restarted A is the same host");
      const start = await api(B, "POST", `/v1/databases/${db1.id}/start`, user.token);
      await command(B, db1.id, start.json.command_id);
    });

    await t.test("each periodic job runs once per interval over both processes", async () => {
      const rows = await until(
        "a periodic run",
        async () => {
          const { rows } = await store.query<{ name: string; minute: Date; runs: number }>(
            `SELECT j.name, date_trunc('minute', j.created_on) AS minute, count(*)::int AS runs FROM pgboss.job j
            WHERE j.name IN (SELECT name FROM pgboss.schedule) GROUP BY 1, 2`,
          );
          return rows.some((r) => r.name === "billing.meter") ? rows : undefined;
        },
        75_000,
        1000,
      );
      for (const r of rows)
        assert.equal(r.runs, 1, `${r.name} ran ${r.runs} times in the minute ${r.minute.toISOString()}`);
      // the watcher is per host: each host schedules its own
      const { rows: schedules } = await store.query<{ name: string }>(
        "SELECT name FROM pgboss.schedule WHERE name LIKE 'databases.watch%'",
      );
      assert.deepEqual(
        schedules.map((s) => s.name).sort(),
        [`databases.watch.${hostA.id}`, `databases.watch.${hostB.id}`].sort(),
      );
    });
    t.diagnostic(`figures: ${JSON.stringify(figures)}`);
    console.log("two-process figures", JSON.stringify(figures));
  } catch (err) {
    console.error("A:", A.log(), "\nB:", B.log(), "\nC:", C.log());
    throw err;
  } finally {
    B.child.kill("SIGCONT");
    await Promise.all([kill(A, "SIGTERM"), kill(B, "SIGTERM"), kill(C, "SIGTERM")]);
    for (const dir of dirs) {
      const provider = new LocalDatabaseProvider({ dataDir: dir });
      for (const id of ids) await provider.purge(id).catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    }
    await store.end();
    await redis?.stop();
    await database.drop();
  }
});
