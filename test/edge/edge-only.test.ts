/**
 * An edge-only process (ROLES=edge: `npm start` on an edge host) against the same store as an API process:
 * it needs no API port, serves pods through the apps area's route source, follows the pods' rows through
 * migration 013's trigger (NOTIFY pod_routes) well before its routes' 5 s lifetime ends (within 3 s: a loaded CI
 * host is slow), and stops cleanly on SIGTERM.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { freePort } from "../../src/pgserver/cluster.js";
import { TEST_SECRET_KEY, createTestApp, signup } from "../helpers/app.js";
import { kill, launch, until } from "../hosts/lib.js";
import { APPS_DOMAIN, request, upstream, within } from "./lib.js";

test("ROLES=edge: a process with only the edge serves pods from the store and follows their rows", async (ctx) => {
  const t = await createTestApp({ env: { APPS_DOMAIN } });
  const dir = mkdtempSync(path.join(tmpdir(), "edge-only-"));
  // the API port is taken by someone else: an edge-only process must not need it
  const squatter = net.createServer();
  await new Promise<void>((r) => squatter.listen(0, "127.0.0.1", () => r()));
  const apiPort = (squatter.address() as net.AddressInfo).port;
  const edgePort = await freePort();
  const [v1, v2] = [await upstream("v1"), await upstream("v2")];
  const proc = launch("edge", {
    DATABASE_URL: t.url,
    DATA_DIR: dir,
    PLATFORM_SECRET_KEY: TEST_SECRET_KEY,
    OPERATOR_TOKEN: "edge-only-operator-token-0123",
    ROLES: "edge",
    PORT: String(apiPort),
    EDGE_PORT: String(edgePort),
    EDGE_TLS_PORT: "0",
    APPS_DOMAIN,
  });
  try {
    const user = await signup(t.app);
    const id = randomUUID();
    await t.db.query(
      `INSERT INTO pods (id, owner_kind, owner_id, account_id, name, slug, image, env_sealed, size, desired_state, state)
       VALUES ($1, 'account', $2, $2, 'web', 'web-edge', 'img:v1', 'x', 'nano', 'running', 'creating')`,
      [id, user.id],
    );
    const host = `web-edge.${APPS_DOMAIN}`;
    await until(
      "the edge-only process to answer",
      async () => ((await request(edgePort, `nobody.${APPS_DOMAIN}`)).status === 404 ? true : undefined),
      60_000,
    );
    assert.equal(proc.child.exitCode, null, proc.log());

    // creating: known, nothing serving yet
    const starting = await request(edgePort, host);
    assert.equal(starting.status, 503);
    assert.equal(starting.headers["retry-after"], "5");

    // the pod's row says where it serves: followed through the trigger's NOTIFY
    await t.db.query("UPDATE pods SET state = 'running', address = $2 WHERE id = $1", [id, v1.address]);
    const first = await within(
      "the edge to serve v1",
      3000,
      async () => (await request(edgePort, host)).status === 200,
    );
    assert.equal((await request(edgePort, host)).json().name, "v1");
    // a new replica takes over (what a rolling update records)
    await t.db.query("UPDATE pods SET address = $2 WHERE id = $1", [id, v2.address]);
    const second = await within(
      "the edge to follow to v2",
      3000,
      async () => (await request(edgePort, host)).json().name === "v2",
    );
    ctx.diagnostic(`followed the row in ${first} ms and ${second} ms`);
    // stopped: known, not serving
    await t.db.query("UPDATE pods SET desired_state = 'stopped', state = 'stopped' WHERE id = $1", [id]);
    await within("the edge to see it stopped", 3000, async () => (await request(edgePort, host)).status === 503);

    // the API port stayed the squatter's: nothing of the platform answers there
    await kill(proc, "SIGTERM");
    assert.equal(proc.child.exitCode, 0, proc.log());
  } finally {
    await kill(proc, "SIGKILL");
    await v1.close();
    await v2.close();
    squatter.close();
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
