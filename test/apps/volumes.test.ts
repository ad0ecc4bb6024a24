import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import path from "node:path";
import { call, expectError, OPERATOR_TOKEN, scopedKey, signup, type TestApp } from "../helpers/app.js";
import { testImage } from "../helpers/images.js";
import { createAppsTestApp } from "./lib.js";
import type { AppsState } from "../../src/apps/module.js";
import { LABEL_POD } from "../../src/apps/container-spec.js";

/**
 * Volumes through HTTP on real containers and real loop-mounted file systems: creation to ready, one pod
 * at a time mounting it, data kept across restart, update and re-creation, a full volume refusing writes,
 * deletion (409 while mounted), scopes and metering.
 */

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until<T>(what: string, fn: () => Promise<T | null | undefined | false>, ms = 120_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

describe("volumes API on real containers", () => {
  let t: TestApp;
  let user: { token: string; id: string };
  let image: string;
  let volume: any;

  const get = (url: string, token = user.token) => call(t.app, { url, token });
  const post = (url: string, body: unknown, token = user.token) => call(t.app, { method: "POST", url, token, body });
  const del = (url: string, token = user.token) => call(t.app, { method: "DELETE", url, token });

  const fund = async (accountId: string) => {
    const res = await call(t.app, {
      method: "POST",
      url: `/v1/operator/accounts/${accountId}/credit`,
      token: OPERATOR_TOKEN,
      body: { amount: 1_000_000, currency: "KRW", reason: "volume tests" },
    });
    assert.equal(res.statusCode, 201, res.body);
  };

  const volumeState = (ref: string, states: string[], token?: string) =>
    until(`volume ${ref} in ${states}`, async () => {
      const v = (await get(`/v1/volumes/${ref}`, token)).json();
      return states.includes(v.state) && v;
    });

  /** the pod serving its current generation */
  const serving = (id: string) =>
    until(`pod ${id} running`, async () => {
      const p = (await get(`/v1/pods/${id}`)).json();
      if (p.state === "failed") throw new Error(`pod failed: ${p.state_reason}`);
      return p.state === "running" && p.serving_generation === p.generation && p;
    });

  const removed = (id: string) =>
    until(`pod ${id} removed`, async () => (await get(`/v1/pods/${id}`)).json().state === "removed");

  const exec = async (pod: string, script: string, timeout_s = 30) => {
    const res = await post(`/v1/pods/${pod}/exec`, { command: ["sh", "-c", script], timeout_s });
    assert.equal(res.statusCode, 200, res.body);
    return res.json() as { exit_code: number; stdout: string; stderr: string };
  };

  const createPod = async (name: string, volumes: unknown[], extra: Record<string, unknown> = {}) =>
    post("/v1/pods", { name, image, port: 8080, volumes, ...extra });

  before(async () => {
    image = await testImage("TEST_IMAGE_HTTPD_V1");
    t = await createAppsTestApp({ env: { APPS_DRAIN_MS: "0" } });
    user = await signup(t.app);
  });

  after(async () => {
    // whatever a failed test left: every pod and volume is marked removed (so no job brings one back), then
    // the containers, mounts and networks go before the data directory does
    const apps = t.platform.state<AppsState>("apps");
    await t.db.query("UPDATE pods SET desired_state = 'removed'");
    await t.db.query("UPDATE volumes SET state = 'removed'");
    await apps.worker.stop();
    const pods = await t.db.query<{ id: string }>("SELECT id FROM pods");
    for (const p of pods.rows)
      for (const c of await apps.runtime.list({ [LABEL_POD]: p.id })) await apps.runtime.remove(c.name);
    const vols = await t.db.query<{ id: string }>("SELECT id FROM volumes");
    for (const v of vols.rows) await apps.volumes.remove(v.id).catch(() => {});
    const nets = await t.db.query<{ name: string }>("SELECT DISTINCT name FROM owner_networks");
    for (const n of nets.rows) await apps.runtime.removeNetwork(n.name).catch(() => {});
    await t.close();
  });

  test("creation validates the name and size, needs funds, and gives 201 creating, then ready", async () => {
    expectError(await post("/v1/volumes", { name: "Bad_Name", size_gb: 1 }), 400, "bad_slug");
    expectError(await post("/v1/volumes", { name: "data", size_gb: 0 }), 400, "invalid_request");
    expectError(await post("/v1/volumes", { name: "data", size_gb: 1025 }), 400, "invalid_request");
    expectError(await post("/v1/volumes", { name: "data" }), 400, "invalid_request");
    expectError(await post("/v1/volumes", { name: "data", size_gb: 1 }), 402, "insufficient_funds");
    await fund(user.id);

    const res = await post("/v1/volumes", { name: "data", size_gb: 1 });
    assert.equal(res.statusCode, 201, res.body);
    volume = res.json();
    assert.equal(volume.name, "data");
    assert.equal(volume.size_gb, 1);
    assert.equal(volume.state, "creating");
    assert.equal(volume.attached_to, null);
    assert.equal(volume.host_id, t.platform.kernel.require("hosts").local.id);
    expectError(await post("/v1/volumes", { name: "data", size_gb: 2 }), 409, "slug_taken");

    const ready = await volumeState(volume.id, ["ready", "failed"]);
    assert.equal(ready.state, "ready", ready.state_reason);
    assert.equal(typeof ready.used_bytes, "number");
    assert.ok(ready.used_bytes < 1024 ** 3);
    assert.deepEqual(
      (await get("/v1/volumes")).json().map((v: any) => v.id),
      [volume.id],
    );
    assert.equal((await get("/v1/volumes/data")).json().id, volume.id, "a volume is found by name too");
  });

  test("metering: a volume pays storage for its size while it exists", async () => {
    const source = t.platform.kernel.metering.find((s) => s.kind === "volume");
    assert.ok(source, "the apps area registers a volume metering source beside the pods'");
    assert.ok(t.platform.kernel.metering.some((s) => s.kind === "pod"));
    const billable = await source.billableOf(t.db, { kind: "account", id: user.id });
    assert.deepEqual(
      billable.map((b) => [b.id, b.kind, b.size, b.storageGb]),
      [[volume.id, "volume", "standard", 1]],
    );
  });

  test("data survives restart, update and re-creation; one pod at a time; 409 while mounted", async () => {
    const created = await createPod("vol-app", [{ volume: "data", path: "/data" }]);
    assert.equal(created.statusCode, 201, created.body);
    const pod = created.json();
    assert.deepEqual(pod.volumes, [{ volume_id: volume.id, path: "/data" }]);
    await serving(pod.id);
    assert.equal((await get(`/v1/volumes/${volume.id}`)).json().attached_to, pod.id);

    const wrote = await exec(pod.id, "echo hi > /data/f && cat /data/f");
    assert.equal(wrote.exit_code, 0, wrote.stderr);
    assert.equal(wrote.stdout, "hi\n");

    // a second pod cannot mount it, and it cannot be deleted while mounted
    expectError(await createPod("vol-other", [{ volume: "data", path: "/data" }]), 409, "volume_in_use");
    expectError(await del(`/v1/volumes/${volume.id}`), 409, "volume_in_use");
    expectError(await del("/v1/volumes/data"), 409, "volume_in_use");

    // restart: a new container of a new generation sees the file
    const restarted = await post(`/v1/pods/${pod.id}/restart`, {});
    assert.equal(restarted.statusCode, 202, restarted.body);
    await serving(pod.id);
    assert.equal((await exec(pod.id, "cat /data/f")).stdout, "hi\n", "after restart");

    // update (env): rolled to a new generation, same data
    const patched = await call(t.app, {
      method: "PATCH",
      url: `/v1/pods/${pod.id}`,
      token: user.token,
      body: { env: { GREETING: "hello" } },
    });
    assert.equal(patched.statusCode, 200, patched.body);
    await serving(pod.id);
    const afterUpdate = await exec(pod.id, 'echo "$GREETING" && cat /data/f');
    assert.equal(afterUpdate.stdout, "hello\nhi\n", "after update");

    // re-creation: delete the pod, the volume is free; a new pod mounts it, elsewhere, and reads the file
    assert.equal((await del(`/v1/pods/${pod.id}`)).statusCode, 202);
    await removed(pod.id);
    assert.equal((await get(`/v1/volumes/${volume.id}`)).json().attached_to, null);
    const again = await createPod("vol-again", [{ volume: volume.id, path: "/srv/state" }]);
    assert.equal(again.statusCode, 201, again.body);
    const pod2 = again.json();
    await serving(pod2.id);
    assert.equal((await exec(pod2.id, "cat /srv/state/f")).stdout, "hi\n", "after re-creation");
    assert.equal((await get(`/v1/volumes/${volume.id}`)).json().attached_to, pod2.id);

    // full: writing past the size fails with ENOSPC and the volume does not grow
    const full = await exec(pod2.id, "dd if=/dev/zero of=/srv/state/big bs=1M count=1200 2>&1; echo rc=$?", 240);
    assert.match(full.stdout, /No space left/);
    assert.doesNotMatch(full.stdout, /rc=0/);
    const v = (await get(`/v1/volumes/${volume.id}`)).json();
    assert.ok(v.used_bytes <= 1024 ** 3, `used ${v.used_bytes} bytes of a 1 GB volume`);
    assert.ok(v.used_bytes > 900 * 1024 ** 2, "the write filled the volume");
    assert.equal((await exec(pod2.id, "cat /srv/state/f")).stdout, "hi\n", "earlier data is intact");
    const freed = await exec(pod2.id, "rm /srv/state/big && echo ok > /srv/state/g && cat /srv/state/g");
    assert.equal(freed.stdout, "ok\n", "writable again once space is freed");

    assert.equal((await del(`/v1/pods/${pod2.id}`)).statusCode, 202);
    await removed(pod2.id);
  });

  test("delete: 202 removed, then 404; the host's worker deletes the file system", async () => {
    const store = t.platform.state<AppsState>("apps").volumes;
    const image = path.join(t.config.dataDir, "volumes", `${volume.id}.img`);
    assert.ok(existsSync(image), `the volume's image is at ${image}`);
    const res = await del("/v1/volumes/data");
    assert.equal(res.statusCode, 202, res.body);
    assert.equal(res.json().state, "removed");
    expectError(await get(`/v1/volumes/${volume.id}`), 404, "not_found");
    expectError(await del(`/v1/volumes/${volume.id}`), 404, "not_found");
    assert.deepEqual((await get("/v1/volumes")).json(), []);
    await until("the volume's files removed", async () => !existsSync(image));
    assert.equal(await store.usage(volume.id), null);
    const source = t.platform.kernel.metering.find((s) => s.kind === "volume")!;
    assert.deepEqual(await source.billableOf(t.db, { kind: "account", id: user.id }), [], "no longer billed");
    // the name is free again
    const reused = await post("/v1/volumes", { name: "data", size_gb: 1 });
    assert.equal(reused.statusCode, 201, reused.body);
    await volumeState(reused.json().id, ["ready"]);
    assert.equal((await del("/v1/volumes/data")).statusCode, 202);
  });

  test("a pod cannot mount a volume that is not ready, another owner's, or unknown", async () => {
    const other = await signup(t.app);
    await fund(other.id);
    const theirs = (await post("/v1/volumes", { name: "theirs", size_gb: 1 }, other.token)).json();
    expectError(await get(`/v1/volumes/${theirs.id}`), 404, "not_found");
    expectError(await del(`/v1/volumes/${theirs.id}`), 404, "not_found");
    expectError(await createPod("vol-steal", [{ volume: theirs.id, path: "/data" }]), 404, "not_found");
    expectError(await createPod("vol-none", [{ volume: "nothing", path: "/data" }]), 404, "not_found");
    // waited for as its owner (it is not found for anyone else): deleted once made, not while its job runs
    await volumeState(theirs.id, ["ready"], other.token);
    assert.equal((await del(`/v1/volumes/${theirs.id}`, other.token)).statusCode, 202);

    // a volume that is not ready (here: failed, as when its file system could not be made) is refused, and
    // deleting it still works and removes whatever was made
    const broken = (await post("/v1/volumes", { name: "broken", size_gb: 1 })).json();
    await volumeState(broken.id, ["ready"]);
    await t.db.query("UPDATE volumes SET state = 'failed', state_reason = 'made up by the test' WHERE id = $1", [
      broken.id,
    ]);
    const failed = (await get("/v1/volumes/broken")).json();
    assert.equal(failed.state_reason, "made up by the test");
    assert.equal(failed.used_bytes, null);
    expectError(await createPod("vol-broken", [{ volume: "broken", path: "/data" }]), 409, "conflict");
    assert.equal((await del("/v1/volumes/broken")).statusCode, 202);
    const img = path.join(t.config.dataDir, "volumes", `${broken.id}.img`);
    await until("the failed volume's files removed", async () => !existsSync(img));
  });

  /**
   * A new volume held in `creating`: the test takes the advisory lock the volume job takes for it (jobs.ts), so
   * the job waits, as a slow mkfs would. Retried in the rare case the job got there first.
   */
  async function heldVolume(name: string) {
    for (;;) {
      const v = (await post("/v1/volumes", { name, size_gb: 1 })).json();
      const lock = await t.db.connect();
      await lock.query("SELECT pg_advisory_lock(hashtext('volume:' || $1::text))", [v.id]);
      const { rows } = await lock.query("SELECT state FROM volumes WHERE id = $1", [v.id]);
      const release = async () => {
        await lock.query("SELECT pg_advisory_unlock(hashtext('volume:' || $1::text))", [v.id]);
        lock.release();
      };
      if (rows[0].state === "creating") return { v, release };
      await release();
      assert.equal((await del(`/v1/volumes/${v.id}`)).statusCode, 202);
    }
  }

  test("a pod naming a volume still creating is accepted pending, then runs; a failed volume fails it", async () => {
    const slow = await heldVolume("slow");
    const res = await createPod("vol-wait", [{ volume: "slow", path: "/data" }]);
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.json().state, "pending");
    assert.equal(res.json().state_reason, "waiting for volume slow");
    await sleep(1500); // sweeps pass: still waiting, no container
    const waiting = (await get(`/v1/pods/${res.json().id}`)).json();
    assert.equal(waiting.state, "pending");
    assert.equal(waiting.state_reason, "waiting for volume slow");
    assert.equal((await t.platform.state<AppsState>("apps").runtime.list({ [LABEL_POD]: waiting.id })).length, 0);
    await slow.release();
    await volumeState(slow.v.id, ["ready"]);
    const running = await serving(waiting.id);
    assert.equal(running.state_reason, null);
    const write = await exec(waiting.id, "echo kept > /data/f && cat /data/f");
    assert.equal(write.stdout, "kept\n");

    const doomed = await heldVolume("doomed");
    const pending = (await createPod("vol-doomed", [{ volume: "doomed", path: "/data" }])).json();
    assert.equal(pending.state, "pending");
    // the job's outcome when mkfs fails (jobs.ts step), written while the job itself is held back
    await t.db.query("UPDATE volumes SET state = 'failed', state_reason = 'mkfs.ext4 failed (test)' WHERE id = $1", [
      doomed.v.id,
    ]);
    await doomed.release();
    const failed = await until("the pod failed", async () => {
      const p = (await get(`/v1/pods/${pending.id}`)).json();
      return p.state === "failed" && p;
    });
    assert.equal(failed.state_reason, "volume doomed failed: mkfs.ext4 failed (test)");
    for (const id of [waiting.id, pending.id]) {
      assert.equal((await del(`/v1/pods/${id}`)).statusCode, 202);
      await removed(id);
    }
    assert.equal((await del("/v1/volumes/slow")).statusCode, 202);
    assert.equal((await del("/v1/volumes/doomed")).statusCode, 202);
  });

  test("a volume deleted while its deleted pod is still stopping is removed once the container is gone", async () => {
    const v = (await post("/v1/volumes", { name: "quick", size_gb: 1 })).json();
    await volumeState(v.id, ["ready"]);
    const pod = (await createPod("vol-quick", [{ volume: "quick", path: "/data" }])).json();
    await serving(pod.id);
    assert.equal((await del(`/v1/pods/${pod.id}`)).statusCode, 202);
    const res = await del("/v1/volumes/quick");
    assert.equal(res.statusCode, 202, "a pod being deleted no longer holds its volume");
    const img = path.join(t.config.dataDir, "volumes", `${v.id}.img`);
    await until("the volume's files removed after the pod's container", async () => !existsSync(img), 90_000);
    assert.equal((await get(`/v1/pods/${pod.id}`)).json().state, "removed");
  });

  test("scopes: a read key cannot create; an instance key sees only its volume", async () => {
    const a = (await post("/v1/volumes", { name: "vol-a", size_gb: 1 })).json();
    const b = (await post("/v1/volumes", { name: "vol-b", size_gb: 1 })).json();
    const reader = await scopedKey(t.app, user.token, ["volumes:read"]);
    expectError(await post("/v1/volumes", { name: "vol-c", size_gb: 1 }, reader), 403, "scope_insufficient");
    expectError(await del(`/v1/volumes/${a.id}`, reader), 403, "scope_insufficient");
    assert.equal((await get("/v1/volumes", reader)).json().length, 2);

    const podsKey = await scopedKey(t.app, user.token, ["pods:*"]);
    expectError(await get("/v1/volumes", podsKey), 403, "scope_insufficient");

    const one = await scopedKey(t.app, user.token, [`volumes:write:${a.id}`]);
    assert.deepEqual(
      (await get("/v1/volumes", one)).json().map((v: any) => v.id),
      [a.id],
    );
    assert.equal((await get("/v1/volumes/vol-a", one)).statusCode, 200, "by name too");
    expectError(await get(`/v1/volumes/${b.id}`, one), 403, "scope_insufficient");
    expectError(await del("/v1/volumes/vol-b", one), 403, "scope_insufficient");
    expectError(await post("/v1/volumes", { name: "vol-c", size_gb: 1 }, one), 403, "scope_insufficient");

    const byName = await scopedKey(t.app, user.token, ["volumes:read:vol-b"]);
    assert.deepEqual(
      (await get("/v1/volumes", byName)).json().map((v: any) => v.id),
      [b.id],
    );
    assert.equal((await get(`/v1/volumes/${b.id}`, byName)).statusCode, 200, "a name grant covers the id");

    for (const v of [a, b]) {
      await volumeState(v.id, ["ready", "failed"]);
      assert.equal((await del(`/v1/volumes/${v.id}`, user.token)).statusCode, 202);
    }
  });
});
