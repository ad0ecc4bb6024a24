/**
 * Preview environments (issue 30) through HTTP on real PostgreSQL, buildah, podman and the edge, against the local
 * GitLab fake: a merge-request webhook builds the branch's archive and serves it at <app>-mr-<n>.<apps domain> with
 * the URL posted as a note and a branch of the linked database (the parent's rows, checked with psql) attached to the
 * pod; a push rolls it to the new commit; close removes the pod, the branch and the URL; a wrong or missing secret is
 * refused with nothing recorded.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { call, expectError, signup, type TestApp } from "../helpers/app.js";
import { startFakeGitlab, type FakeGitlab } from "../fakes/gitlab.js";
import type { Edge } from "../../src/edge/module.js";
import { request } from "../edge/lib.js";
import { BUSYBOX, createBuildsTestApp } from "../builds/lib.js";
import { previewsArea } from "../../src/previews/module.js";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { waitFor } from "../databases/lib.js";

const TOKEN = "glpat-preview-token-1234";
const DOMAIN = "apps.previews.test";
const HTTPD = `FROM scratch
COPY busybox /bin/busybox
COPY index.html /www/index.html
CMD ["/bin/busybox", "httpd", "-f", "-p", "8080", "-h", "/www"]
`;

let t: TestApp;
let gl: FakeGitlab;
let user: { token: string; id: string };
let link: any;
let busybox: Buffer;
/** the database each preview gets a branch of */
let shopDb: any;
const psql = async (url: string, sql: string) =>
  (await promisify(execFile)("psql", [url, "-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-c", sql])).stdout.trim();
const app = `shop${process.pid % 10000}`;

const api = (method: "GET" | "POST" | "DELETE", url: string, body?: unknown) =>
  call(t.app, { method, url, token: user.token, body });

function hook(event: string, body: unknown, secret: string | null = link.webhook_secret, linkId = link.id) {
  return call(t.app, {
    method: "POST",
    url: `/v1/previews/gitlab/webhook?link=${linkId}`,
    headers: { "x-gitlab-event": event, ...(secret === null ? {} : { "x-gitlab-token": secret }) },
    body,
  });
}

const mr = (action: string, sha: string, state = "opened") => ({
  object_kind: "merge_request",
  object_attributes: { iid: 7, action, state, source_branch: "feature", last_commit: { id: sha } },
});

const push = (sha: string) => ({ object_kind: "push", ref: "refs/heads/feature", checkout_sha: sha, after: sha });

const commit = (text: string) =>
  gl.branchCommit(`acme/${app}`, {
    Dockerfile: { content: HTTPD },
    busybox: { content: busybox, mode: 0o755 },
    "index.html": { content: text },
  });

async function until<T>(what: string, ms: number, probe: () => Promise<T | null | undefined | false>): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > deadline) assert.fail(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

const served = (host: string) => request(t.platform.state<Edge>("edge").port!, host);

describe("previews: merge request → build, pod, URL; push → rollout; close → removed", () => {
  before(async () => {
    busybox = await readFile(BUSYBOX);
    t = await createBuildsTestApp({ env: { APPS_DOMAIN: DOMAIN, PREVIEWS_POLL_SECONDS: "1" } });
    gl = await startFakeGitlab({ token: TOKEN, groups: [{ name: "Acme", path: "acme" }] });
    gl.addProject(app);
    user = await signup(t.app);
    const db = await api("POST", "/v1/databases", { name: `${app}-db` });
    assert.equal(db.statusCode, 201, db.body);
    shopDb = db.json();
    await waitFor(t, user.token, shopDb.id, (d) => d.state === "running");
    await psql(shopDb.database_url, "CREATE TABLE products (name text); INSERT INTO products VALUES ('tea'), ('cup')");
  });
  after(async () => {
    for (const p of (await call(t.app, { url: "/v1/pods", token: user.token })).json())
      await call(t.app, { method: "DELETE", url: `/v1/pods/${p.id}`, token: user.token });
    await new Promise((r) => setTimeout(r, 1000));
    await gl?.close();
    await t?.close();
  });

  test("a link answers the webhook URL and its secret once; the token is never shown", async () => {
    const res = await api("POST", "/v1/previews/links", {
      ...{ base_url: gl.url, project: `acme/${app}`, token: TOKEN, app_name: app, port: 8080 },
      ...{ idle_stop_seconds: null, database: shopDb.slug },
    });
    assert.equal(res.statusCode, 201, res.body);
    link = res.json();
    assert.match(link.webhook_secret, /^[A-Za-z0-9_-]{32}$/);
    assert.match(link.webhook_url, new RegExp(`/v1/previews/gitlab/webhook\\?link=${link.id}$`));
    const listed = (await api("GET", "/v1/previews/links")).json().items;
    assert.equal(listed.length, 1);
    assert.equal(listed[0].webhook_secret, undefined);
    assert.ok(!JSON.stringify(listed).includes(TOKEN));
    // a second link of the same app name is a conflict; an internal address other than the allowed loopback is refused
    expectError(
      await api("POST", "/v1/previews/links", { base_url: gl.url, project: "x/y", token: TOKEN, app_name: app }),
      409,
      "conflict",
    );
    assert.equal(link.database, shopDb.id);
    // a database that is not the caller's cannot be branched for previews
    expectError(
      await api("POST", "/v1/previews/links", {
        ...{ base_url: gl.url, project: "x/y", token: TOKEN, app_name: "other", database: "no-such-db" },
      }),
      404,
      "not_found",
    );
    expectError(
      await api("POST", "/v1/previews/links", {
        base_url: "http://169.254.169.254",
        project: "x/y",
        token: TOKEN,
        app_name: "other",
      }),
      400,
      "destination_forbidden",
    );
  });

  test("a wrong or missing secret is refused and records nothing", async () => {
    const sha = commit("never built\n");
    expectError(await hook("Merge Request Hook", mr("open", sha), "not-the-secret"), 401, "webhook_secret_invalid");
    expectError(await hook("Merge Request Hook", mr("open", sha), null), 401, "webhook_secret_invalid");
    expectError(
      await hook("Merge Request Hook", mr("open", sha), link.webhook_secret, "00000000-0000-0000-0000-000000000000"),
      401,
      "webhook_secret_invalid",
    );
    assert.deepEqual((await api("GET", "/v1/previews")).json().items, []);
  });

  test("open builds the branch and serves it at <app>-mr-7 with the URL posted to the merge request", async () => {
    const sha = commit("preview v1\n");
    const res = await hook("Merge Request Hook", mr("open", sha));
    assert.equal(res.statusCode, 202, res.body);
    const [id] = res.json().previews;
    const running = await until("preview running", 180_000, async () => {
      const p = (await api("GET", `/v1/previews/${id}`)).json();
      assert.notEqual(p.state, "failed", p.error);
      return p.state === "running" && p;
    });
    // the same URL the pod shows (<slug>.<APPS_DOMAIN>, the edge's configured port)
    const pod = (await api("GET", `/v1/pods/${running.pod_id}`)).json();
    assert.equal(pod.slug, `${app}-mr-7`);
    assert.equal(running.url, pod.url);
    assert.equal(running.deployed_commit, sha);
    const host = `${app}-mr-7.${DOMAIN}`;
    await until("served through the edge", 60_000, async () => (await served(host)).body === "preview v1\n");
    const notes = gl.project(`acme/${app}`)!.notes;
    assert.equal(notes.length, 1);
    assert.equal(notes[0].iid, 7);
    assert.ok(notes[0].body.includes(running.url), notes[0].body);
    const listed = (await api("GET", "/v1/previews")).json().items;
    assert.deepEqual(
      listed.map((p: any) => [p.merge_request_iid, p.state]),
      [[7, "running"]],
    );
    // the merge request's branch of the linked database: the parent's rows, attached to the pod (DATABASE_URL)
    const branch = (await api("GET", `/v1/databases/${running.database_branch_id}`)).json();
    assert.deepEqual([branch.parent_id, branch.state, branch.slug], [shopDb.id, "running", `${app}-mr-7`]);
    assert.deepEqual(pod.databases, [branch.id]);
    const env = await api("POST", `/v1/pods/${pod.id}/exec`, { command: ["/bin/busybox", "env"] });
    assert.equal(env.statusCode, 200, env.body);
    assert.match(
      env.json().stdout,
      new RegExp(`DATABASE_URL=postgres://[^\\n]*:${branch.port}/`),
      "the pod's DATABASE_URL is the branch's",
    );
    // the branch's own password, revealed once as for any database
    const tables = await call(t.app, {
      method: "POST",
      url: `/v1/databases/${branch.id}/initial-credentials`,
      token: user.token,
    });
    assert.equal(tables.statusCode, 200, tables.body);
    assert.equal(
      await psql(tables.json().database_url, "SELECT string_agg(name, ',' ORDER BY name) FROM products"),
      "cup,tea",
    );
  });

  test("a push to the branch rolls the preview to the new commit", async () => {
    const sha = commit("preview v2\n");
    const res = await hook("Push Hook", push(sha));
    assert.equal(res.statusCode, 202, res.body);
    assert.equal(res.json().accepted, true);
    const [id] = res.json().previews;
    await until("v2 deployed", 180_000, async () => {
      const p = (await api("GET", `/v1/previews/${id}`)).json();
      assert.notEqual(p.state, "failed", p.error);
      return p.state === "running" && p.deployed_commit === sha;
    });
    await until("v2 served", 60_000, async () => (await served(`${app}-mr-7.${DOMAIN}`)).body === "preview v2\n");
    assert.equal(gl.project(`acme/${app}`)!.notes.length, 1, "the URL is posted once");
  });

  test("close removes the pod and the URL", async () => {
    const before = (await api("GET", "/v1/previews")).json().items[0];
    const res = await hook("Merge Request Hook", mr("close", before.commit, "closed"));
    assert.equal(res.statusCode, 202, res.body);
    await until(
      "preview removed",
      60_000,
      async () => (await api("GET", `/v1/previews/${before.id}`)).json().state === "removed",
    );
    const pod = await api("GET", `/v1/pods/${before.pod_id}`);
    assert.ok(pod.statusCode === 404 || pod.json().desired_state === "removed", pod.body);
    const branch = (await api("GET", `/v1/databases/${before.database_branch_id}`)).json();
    assert.equal(branch.desired_state, "removed", "the database branch is deleted with the preview");
    await until("URL gone", 30_000, async () => (await served(`${app}-mr-7.${DOMAIN}`)).status === 404);
    const events = (await api("GET", `/v1/events?resource_kind=preview&resource_id=${before.id}`)).json().items;
    assert.deepEqual(
      events.map((e: any) => e.type),
      ["preview.deleted", "preview.ready", "preview.ready"],
    );
  });

  test("a commit GitLab has no archive of fails the preview; past its maximum age the sweep removes it", async () => {
    const res = await hook("Merge Request Hook", {
      ...mr("open", "f".repeat(40)),
      object_attributes: { ...mr("open", "f".repeat(40)).object_attributes, iid: 9 },
    });
    assert.equal(res.statusCode, 202, res.body);
    const [id] = res.json().previews;
    const failed = await until("failed", 30_000, async () => {
      const p = (await api("GET", `/v1/previews/${id}`)).json();
      return p.state === "failed" && p;
    });
    assert.match(failed.error, /GitLab answered GET .*archive.* with 404/);
    // a week old (the default maximum age): the sweep, as its every-minute job runs it, closes and removes it
    await t.db.query("UPDATE previews SET created_at = now() - interval '8 days' WHERE id = $1", [id]);
    const sweep = previewsArea.jobs!(t.platform, t.platform.state("previews")).find(
      (j) => j.name === "previews.sweep",
    )!;
    await sweep.handler({}, { id: "test", retryCount: 0 });
    const removed = await until("removed", 30_000, async () => {
      const p = (await api("GET", `/v1/previews/${id}`)).json();
      return p.state === "removed" && p;
    });
    assert.equal(removed.error, "removed past the maximum age");
  });
});
