import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import net from "node:net";
import pg from "pg";
import { call, createTestApp, expectError, scopedKey, signup, type TestApp } from "../helpers/app.js";

/** Connects with a URL as the API gave it; the certificate is self-signed, so it is not verified. */
async function connect(url: string, from?: string): Promise<pg.Client> {
  const u = new URL(url);
  let stream: (() => net.Socket) | undefined;
  if (from) {
    stream = () => {
      const sock = new net.Socket();
      const original = sock.connect.bind(sock) as (o: net.TcpSocketConnectOpts) => net.Socket;
      (sock as unknown as { connect: (port: number, host: string) => net.Socket }).connect = (port, host) =>
        original({ port, host, localAddress: from });
      return sock;
    };
  }
  assert.equal(u.searchParams.get("sslmode"), "require");
  const client = new pg.Client({
    host: u.hostname,
    port: Number(u.port),
    user: decodeURIComponent(u.username),
    password: decodeURIComponent(u.password),
    database: u.pathname.slice(1),
    ssl: { rejectUnauthorized: false },
    stream,
    connectionTimeoutMillis: 10_000,
  });
  client.on("error", () => {});
  await client.connect();
  return client;
}

async function waitFor(
  t: TestApp,
  token: string,
  id: string,
  predicate: (db: any) => boolean,
  timeoutMs = 90_000,
): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  let last: any;
  while (Date.now() < deadline) {
    last = (await call(t.app, { url: `/v1/databases/${id}`, token })).json();
    if (predicate(last)) return last;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`database never reached the expected state: ${JSON.stringify(last).slice(0, 800)}`);
}

const withPassword = (url: string, password: string) => {
  const u = new URL(url);
  u.password = password;
  return u.toString();
};

describe("databases API on real PostgreSQL servers", () => {
  let t: TestApp;
  let user: { token: string; id: string };
  let dev: any;
  before(async () => {
    t = await createTestApp({ startJobs: true });
    user = await signup(t.app);
  });
  after(async () => {
    await t.close();
  });

  test("creation validates name, slug, size, version, retention and engine with the spec's codes", async () => {
    const post = (body: unknown) => call(t.app, { method: "POST", url: "/v1/databases", token: user.token, body });
    expectError(await post({ name: "ab" }), 400, "bad_slug");
    expectError(await post({ name: "Has_Upper" }), 400, "bad_slug");
    expectError(await post({ name: "okname", slug: "-bad-" }), 400, "bad_slug");
    expectError(await post({ name: "okname", size: "huge" }), 400, "bad_size");
    expectError(await post({ name: "okname", version: 15 }), 400, "bad_version");
    expectError(await post({ name: "okname", pitr_retention_days: 0 }), 400, "invalid_request");
    expectError(await post({ name: "okname", pitr_retention_days: 36 }), 400, "invalid_request");
    expectError(await post({ name: "okname", engine: "mysql" }), 400, "invalid_request");
    expectError(await post({ name: "okname", owner: "someone" }), 400, "invalid_request");
    assert.equal(
      (await call(t.app, { url: "/v1/databases", token: user.token })).json().length,
      0,
      "nothing was created",
    );
  });

  test("create gives 201 with one-time passwords; the server becomes running and accepts the URL", async () => {
    const res = await call(t.app, {
      method: "POST",
      url: "/v1/databases",
      token: user.token,
      body: { name: "app-db" },
    });
    assert.equal(res.statusCode, 201);
    dev = res.json();
    assert.equal(dev.slug, "app-db");
    assert.equal(dev.version, 17);
    assert.equal(dev.size, "dev");
    assert.equal(dev.storage_gb, 10);
    assert.equal(dev.pitr_retention_days, 7);
    assert.equal(dev.state, "creating");
    assert.equal(dev.public_host, "app-db.db.localhost");
    assert.match(dev.internal_host, /^app-db\.db\./);
    assert.ok(dev.password && dev.superuser_password);
    assert.ok(dev.database_url.includes(encodeURIComponent(dev.password)));
    const running = await waitFor(t, user.token, dev.id, (d) => d.state === "running");
    assert.ok(!JSON.stringify(running).includes(dev.password), "GET never shows the password");
    const client = await connect(dev.database_url);
    await client.query("CREATE TABLE notes (id int primary key, body text)");
    await client.query("INSERT INTO notes VALUES (1, 'kept')");
    assert.equal((await client.query("SHOW ssl")).rows[0].ssl, "on");
    await client.end();
  });

  test("slug collisions give 409 slug_taken; another account gets 404 for the instance", async () => {
    expectError(
      await call(t.app, {
        method: "POST",
        url: "/v1/databases",
        token: user.token,
        body: { name: "other", slug: "app-db" },
      }),
      409,
      "slug_taken",
    );
    const stranger = await signup(t.app);
    expectError(await call(t.app, { url: `/v1/databases/${dev.id}`, token: stranger.token }), 404, "not_found");
    expectError(
      await call(t.app, { method: "POST", url: `/v1/databases/${dev.id}/stop`, token: stranger.token }),
      404,
      "not_found",
    );
    assert.equal(
      (await call(t.app, { url: "/v1/databases/app-db", token: user.token })).json().id,
      dev.id,
      "slug addresses it too",
    );
  });

  test("state rules: start needs paused, backup and stop need running, stop needs size dev", async () => {
    expectError(
      await call(t.app, { method: "POST", url: `/v1/databases/${dev.id}/start`, token: user.token }),
      400,
      "not_stopped",
    );
    const stop = await call(t.app, { method: "POST", url: `/v1/databases/${dev.id}/stop`, token: user.token });
    assert.equal(stop.statusCode, 202);
    assert.match(stop.json().command_id, /^[0-9a-f-]{36}$/);
    await waitFor(t, user.token, dev.id, (d) => d.state === "paused");
    await assert.rejects(connect(dev.database_url), "a paused database refuses connections");
    expectError(
      await call(t.app, { method: "POST", url: `/v1/databases/${dev.id}/backup`, token: user.token }),
      400,
      "not_running",
    );
    expectError(
      await call(t.app, { method: "POST", url: `/v1/databases/${dev.id}/stop`, token: user.token }),
      400,
      "not_running",
    );
    assert.equal(
      (await call(t.app, { method: "POST", url: `/v1/databases/${dev.id}/start`, token: user.token })).statusCode,
      202,
    );
    await waitFor(t, user.token, dev.id, (d) => d.state === "running");
    const client = await connect(dev.database_url);
    assert.equal(
      (await client.query("SELECT body FROM notes WHERE id = 1")).rows[0].body,
      "kept",
      "data survives stop/start",
    );
    await client.end();
  });

  test("rotate-password shows the new password once and refuses the old one at once", async () => {
    const res = await call(t.app, {
      method: "POST",
      url: `/v1/databases/${dev.id}/rotate-password`,
      token: user.token,
    });
    assert.equal(res.statusCode, 200);
    const fresh = res.json().password;
    assert.ok(fresh && fresh !== dev.password);
    await assert.rejects(connect(dev.database_url), /password/);
    const client = await connect(withPassword(dev.database_url, fresh));
    await client.end();
    dev.database_url = withPassword(dev.database_url, fresh);
  });

  test("initial-credentials reveals once, then 409", async () => {
    const first = await call(t.app, {
      method: "POST",
      url: `/v1/databases/${dev.id}/initial-credentials`,
      token: user.token,
    });
    assert.equal(first.statusCode, 200);
    assert.equal(first.json().password, dev.password);
    expectError(
      await call(t.app, { method: "POST", url: `/v1/databases/${dev.id}/initial-credentials`, token: user.token }),
      409,
      "credentials_already_revealed",
    );
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
    await assert.rejects(connect(dev.database_url, "127.0.0.2"));
    const ok = await connect(dev.database_url, "127.0.0.1");
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
    (await connect(dev.database_url, "127.0.0.2")).end();
  });

  test("snapshot backups appear on the instance and in GET /v1/backups", async () => {
    const res = await call(t.app, {
      method: "POST",
      url: `/v1/databases/${dev.id}/backup`,
      token: user.token,
      body: { label: "before-migration" },
    });
    assert.equal(res.statusCode, 202);
    const d = await waitFor(
      t,
      user.token,
      dev.id,
      (x) => x.backups?.some((b: any) => b.label === "before-migration"),
      60_000,
    );
    const b = d.backups.find((x: any) => x.label === "before-migration");
    assert.equal(b.kind, "snapshot");
    assert.ok(b.size_bytes > 0);
    assert.ok(b.start_lsn && b.stop_lsn);
    const index = (await call(t.app, { url: "/v1/backups", token: user.token })).json();
    assert.ok(index.some((x: any) => x.id === b.id && x.database_id === dev.id));
  });

  test("restore validates the target time, then answers 501 restore_not_ready", async () => {
    const restore = (body?: unknown) =>
      call(t.app, { method: "POST", url: `/v1/databases/${dev.id}/restore`, token: user.token, body });
    expectError(await restore({ target_time: "yesterday" }), 400, "bad_time");
    expectError(await restore({ target_time: new Date(Date.now() + 3600_000).toISOString() }), 400, "future_time");
    expectError(
      await restore({ target_time: new Date(Date.now() - 8 * 86_400_000).toISOString() }),
      400,
      "out_of_retention",
    );
    expectError(await restore({ target_time: new Date(Date.now() - 1000).toISOString() }), 501, "restore_not_ready");
    expectError(await restore(), 501, "restore_not_ready");
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

  test("instance-limited keys: their instance only, no creation, lists narrowed, slug or id both match", async () => {
    const other = await call(t.app, {
      method: "POST",
      url: "/v1/databases",
      token: user.token,
      body: { name: "second-db" },
    });
    assert.equal(other.statusCode, 201);
    const bySlug = await scopedKey(t.app, user.token, ["databases:write:app-db"]);
    const byId = await scopedKey(t.app, user.token, [`databases:read:${dev.id}`]);
    assert.equal((await call(t.app, { url: `/v1/databases/${dev.id}`, token: bySlug })).statusCode, 200);
    assert.equal((await call(t.app, { url: "/v1/databases/app-db", token: byId })).statusCode, 200);
    expectError(await call(t.app, { url: "/v1/databases/second-db", token: bySlug }), 403, "scope_insufficient");
    expectError(
      await call(t.app, { method: "POST", url: "/v1/databases", token: bySlug, body: { name: "third-db" } }),
      403,
      "scope_insufficient",
    );
    expectError(
      await call(t.app, { method: "POST", url: `/v1/databases/${dev.id}/stop`, token: byId }),
      403,
      "scope_insufficient",
    );
    const list = (await call(t.app, { url: "/v1/databases", token: bySlug })).json();
    assert.deepEqual(
      list.map((d: any) => d.slug),
      ["app-db"],
    );
    const all = (
      await call(t.app, { url: "/v1/databases", token: await scopedKey(t.app, user.token, ["databases:read"]) })
    ).json();
    assert.equal(all.length, 2);
  });

  test("delete is soft: the instance answers as removed by id, leaves the list, and its server stops", async () => {
    const res = await call(t.app, { method: "DELETE", url: `/v1/databases/${dev.id}`, token: user.token });
    assert.equal(res.statusCode, 202);
    const d = (await call(t.app, { url: `/v1/databases/${dev.id}`, token: user.token })).json();
    assert.equal(d.state, "removed");
    assert.ok(
      !(await call(t.app, { url: "/v1/databases", token: user.token })).json().some((x: any) => x.id === dev.id),
    );
    await waitFor(
      t,
      user.token,
      dev.id,
      (x) => x.commands.find((c: any) => c.id === res.json().command_id)?.status === "succeeded",
      30_000,
    );
    await assert.rejects(connect(dev.database_url));
  });
});
