import { test } from "node:test";
import assert from "node:assert/strict";
import pg from "pg";
import { testImage } from "../helpers/images.js";
import { api, kill, launch, until, type Proc } from "../hosts/lib.js";
import { realPlatform, removePodsAndWait } from "./lib.js";

/**
 * Issue 33: kill -9 of the platform after a create committed and before its answer was stored. The retry with
 * the same Idempotency-Key, on the restarted platform, answers the resource the first attempt made (replayed),
 * and nothing is made twice: one pod, one group with its replica_min members.
 *
 * The kill lands in that window every time: the test holds pg-boss's job table, so the process stops at the
 * first thing it does after the COMMIT (queueing the pod's reconcile) until it is killed.
 */
test("kill -9 between a create's COMMIT and its stored answer: the retry with the same key answers the same pod and group", async () => {
  const image = await testImage("TEST_IMAGE_HTTPD_V1");
  const { database, env } = await realPlatform("idem");
  const store = new pg.Client({ connectionString: database.url });
  await store.connect();
  const up = async (p: Proc) =>
    until("the API", async () => ((await api(p, "GET", "/v1/edition")).status === 200 ? true : undefined));
  let platform = launch("idem", env);
  let token = "";
  const podBody = { name: "idem-pod", image, port: 8080 };
  const groupBody = { name: "idem-group", image, port: 8080, replica_min: 2, replica_max: 3 };
  const create = (url: string, body: object, key: string) =>
    api(platform, "POST", url, token, body, { "idempotency-key": key });
  try {
    await up(platform);
    token = (
      await api(platform, "POST", "/v1/auth/signup", undefined, {
        email: "idem@example.com",
        password: "long enough pw",
      })
    ).json.token;

    await store.query("BEGIN");
    await store.query("LOCK TABLE pgboss.job IN EXCLUSIVE MODE");
    const cut = [create("/v1/pods", podBody, "pod-key"), create("/v1/pod-groups", groupBody, "group-key")].map((r) =>
      r.catch(() => null),
    );
    const made = async () => {
      const { rows } = await store.query<{ pod: string | null; group: string | null; members: number }>(
        `SELECT (SELECT id FROM pods WHERE name = 'idem-pod') AS pod, (SELECT id FROM pod_groups) AS "group",
                (SELECT count(*)::int FROM pods WHERE group_id IS NOT NULL) AS members`,
      );
      return rows[0]!.pod && rows[0]!.group && rows[0]!.members === 1 ? rows[0]! : undefined;
    };
    const first = await until("both creates committed", made, 60_000, 20);
    const keys = await store.query("SELECT key, state FROM idempotency_keys ORDER BY key");
    assert.deepEqual(
      keys.rows.map((r) => `${r.key}:${r.state}`),
      ["group-key:running", "pod-key:running"],
      "killed before either answer was stored",
    );
    await kill(platform, "SIGKILL");
    await store.query("ROLLBACK");
    await Promise.all(cut);

    platform = launch("idem-again", env);
    await up(platform);
    const pod = await create("/v1/pods", podBody, "pod-key");
    assert.equal(pod.status, 201, JSON.stringify(pod.json));
    assert.equal(pod.json.id, first.pod, "the pod the first attempt made");
    assert.equal(pod.headers.get("idempotent-replayed"), "true");
    const group = await create("/v1/pod-groups", groupBody, "group-key");
    assert.equal(group.status, 201, JSON.stringify(group.json));
    assert.equal(group.json.id, first.group, "the group the first attempt made");
    assert.equal(group.headers.get("idempotent-replayed"), "true");
    // a later retry gets the stored answer: still the same
    assert.equal((await create("/v1/pods", podBody, "pod-key")).json.id, first.pod);
    assert.equal((await create("/v1/pod-groups", groupBody, "group-key")).json.id, first.group);

    const counts = await store.query(
      `SELECT (SELECT count(*)::int FROM pods WHERE group_id IS NULL) AS pods,
              (SELECT count(*)::int FROM pod_groups) AS groups,
              (SELECT count(*)::int FROM pods WHERE group_id IS NOT NULL) AS members`,
    );
    assert.deepEqual(counts.rows[0], { pods: 1, groups: 1, members: 2 }, "one pod, one group of replica_min members");
  } finally {
    const ids = (await store.query<{ id: string }>("SELECT id FROM pods")).rows.map((r) => r.id);
    const groups = (await store.query<{ id: string }>("SELECT id FROM pod_groups")).rows.map((r) => r.id);
    await store.query("ROLLBACK").catch(() => null);
    for (const id of groups) await api(platform, "DELETE", `/v1/pod-groups/${id}`, token).catch(() => null);
    await removePodsAndWait(platform, token, ids);
    await kill(platform, "SIGTERM");
    await store.end();
    await database.drop();
  }
});
