/**
 * GitLab syncs end to end (src/orgs/README.md, "GitLab integration and syncs") against a local GitLab
 * (test/fakes/gitlab.ts), with the job queue running and the scan pass run by the test (schedules are off in tests):
 * a company static site deployed → its files pushed to `<group>/<slug>` and its manifest committed to the GitOps
 * repository; a new deployment pushes only what changed; a manifest committed in GitLab rolls the site to the
 * deployment it names (auto-sync), a broken one fails with the reason; a failing GitLab → failed syncs, retry
 * re-queues them and they succeed once GitLab recovers; a company pod: archive skipped (no source kept), its image
 * rolled out from a commit in GitLab.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { call, expectError, type TestApp } from "../helpers/app.js";
import { testImage } from "../helpers/images.js";
import { createAppsTestApp } from "../apps/lib.js";
import { fund } from "../databases/lib.js";
import { tarGz } from "../static/lib.js";
import { startFakeGitlab, type FakeGitlab } from "../fakes/gitlab.js";
import { gitJobDeps } from "../../src/orgs/gitlab/module.js";
import { scanOnce } from "../../src/orgs/gitlab/jobs.js";
import { makeOrg, ORG, type Person, type TestOrg } from "./lib.js";

const TOKEN = "glpat-sync-token-5678";

let t: TestApp;
let gl: FakeGitlab;
let org: TestOrg;
let admin: Person;
const slug = `docs-${process.pid % 100000}`;

before(async () => {
  t = await createAppsTestApp({ env: { GITLAB_SYNC_RETRIES: "1", GITLAB_TIMEOUT_MS: "3000" } });
  gl = await startFakeGitlab({ token: TOKEN, groups: [{ name: "Acme", path: "acme" }] });
  org = await makeOrg(t, { admins: 1, members: 0 });
  admin = org.admins[0];
  await fund(t, admin.id);
  const res = await req("PUT", "/v1/org/integrations/gitlab", {
    base_url: gl.url,
    group_path: "acme",
    token: TOKEN,
    archive_enabled: true,
    gitops_enabled: true,
    gitops_repo: "deploys",
    gitops_namespace: "prod",
    gitops_host_pattern: "{slug}.apps.example.com",
    gitops_auto_sync: true,
  });
  assert.equal(res.statusCode, 201, res.body);
});
after(async () => {
  await gl?.close();
  await t?.close();
});

function req(method: "GET" | "PUT" | "POST" | "DELETE", url: string, body?: unknown, headers = {}) {
  return call(t.app, { method, url, token: admin.token, body, headers });
}

const scan = () => scanOnce(gitJobDeps(t.platform));

interface Sync {
  id: string;
  app_slug: string;
  kind: string;
  status: string;
  commit_id: string | null;
  project_path: string | null;
  detail: string | null;
  error: string | null;
  attempts: number;
}

const syncs = async (): Promise<Sync[]> => (await req("GET", "/v1/org/git-syncs?limit=200")).json().items;

/** Waits until no sync is queued or running and `ok` holds; the newest first. */
async function settled(ok: (list: Sync[]) => boolean = () => true, ms = 40_000): Promise<Sync[]> {
  const deadline = Date.now() + ms;
  let list: Sync[] = [];
  while (Date.now() < deadline) {
    list = await syncs();
    if (list.every((s) => s.status !== "queued" && s.status !== "running") && ok(list)) return list;
    await new Promise((r) => setTimeout(r, 200));
  }
  assert.fail(`syncs did not settle: ${JSON.stringify(list.slice(0, 6), null, 1)}`);
}

const newest = (list: Sync[], kind: string, app = slug) => list.find((s) => s.kind === kind && s.app_slug === app)!;

/** A deployment of the company site made live; its id. */
async function deploy(files: Record<string, string>): Promise<string> {
  const created = await req("POST", `/v1/static/${slug}/deployments`, undefined, ORG);
  assert.equal(created.statusCode, 201, created.body);
  const id = created.json().id;
  const up = await t.app.inject({
    method: "PUT",
    url: `/v1/static/${slug}/deployments/${id}/files`,
    headers: { authorization: `Bearer ${admin.token}`, "content-type": "application/gzip", ...ORG },
    payload: await tarGz(files),
  });
  assert.equal(up.statusCode, 200, up.body);
  const fin = await req("POST", `/v1/static/${slug}/deployments/${id}/finalize`, undefined, ORG);
  assert.equal(fin.statusCode, 200, fin.body);
  return id;
}

const fileText = (path: string, file: string) => gl.project(path)?.files.get(file)?.content.toString();
const manifestOf = (app: string) => JSON.parse(fileText("acme/deploys", `prod/${app}.json`) ?? "null");
/** Polls the company pod (X-Owner: org) until `until` holds. */
async function waitOrgPod(id: string, until: (p: any) => boolean, ms = 60_000) {
  const deadline = Date.now() + ms;
  let last: unknown;
  while (Date.now() < deadline) {
    const res = await req("GET", `/v1/pods/${id}`, undefined, ORG);
    last = res.json();
    if (res.statusCode === 200 && until(last)) return last;
    await new Promise((r) => setTimeout(r, 200));
  }
  assert.fail(`pod ${id} did not get there: ${JSON.stringify(last)}`);
}

const live = async () => (await req("GET", `/v1/static/${slug}`, undefined, ORG)).json().live_deployment_id;

describe("syncs of a company static site", () => {
  let d1: string;
  let d2: string;

  test("deployed: archive pushes its files to a project in the group, gitops commits its manifest", async () => {
    const site = await req("POST", "/v1/static", { name: slug, slug }, ORG);
    assert.equal(site.statusCode, 201, site.body);
    d1 = await deploy({ "index.html": "<h1>v1</h1>", "assets/app.js": "console.log(1)", "assets/logo.txt": "logo" });
    assert.equal(await scan(), 2);
    const list = await settled();
    const archive = newest(list, "archive");
    assert.equal(archive.status, "succeeded", JSON.stringify(archive));
    assert.equal(archive.project_path, `acme/${slug}`);
    const project = gl.project(`acme/${slug}`)!;
    assert.equal(archive.commit_id, project.commits.at(-1)!.id);
    assert.deepEqual([...project.files.keys()].sort(), ["assets/app.js", "assets/logo.txt", "index.html"]);
    assert.equal(fileText(`acme/${slug}`, "index.html"), "<h1>v1</h1>");

    const gitops = newest(list, "gitops");
    assert.equal(gitops.status, "succeeded", JSON.stringify(gitops));
    assert.equal(gitops.project_path, "acme/deploys");
    const m = manifestOf(slug);
    assert.equal(m.kind, "StaticSite");
    assert.equal(m.metadata.namespace, "prod");
    assert.deepEqual(m.spec, { host: `${slug}.apps.example.com`, deploymentId: d1 });
    assert.equal(gitops.commit_id, gl.project("acme/deploys")!.commits.at(-1)!.id);
    // every call carried the token
    assert.ok(gl.requests.every((r) => r.token === TOKEN));
    // nothing changed: nothing queued
    assert.equal(await scan(), 0);
  });

  test("a new deployment: only changed files in the commit, removed ones deleted; the manifest follows", async () => {
    d2 = await deploy({ "index.html": "<h1>v2</h1>", "about.html": "about", "assets/logo.txt": "logo" });
    assert.equal(await scan(), 2);
    const list = await settled((l) => l.filter((s) => s.kind === "archive").length === 2);
    const archive = newest(list, "archive");
    assert.equal(archive.status, "succeeded", JSON.stringify(archive));
    assert.match(archive.detail!, /1 created, 1 updated, 1 deleted/);
    const project = gl.project(`acme/${slug}`)!;
    assert.deepEqual(
      project.commits.at(-1)!.actions.map((a) => `${a.action} ${a.file_path}`),
      ["create about.html", "update index.html", "delete assets/app.js"],
    );
    assert.deepEqual([...project.files.keys()].sort(), ["about.html", "assets/logo.txt", "index.html"]);
    assert.equal(manifestOf(slug).spec.deploymentId, d2);
  });

  test("auto-sync: a manifest committed in GitLab rolls the site to the deployment it names", async () => {
    const m = manifestOf(slug);
    m.spec.deploymentId = d1;
    const commit = gl.userCommit("acme/deploys", `prod/${slug}.json`, JSON.stringify(m));
    const commitsBefore = gl.project("acme/deploys")!.commits.length;
    assert.equal(await scan(), 1);
    let list = await settled((l) => l.some((s) => s.kind === "auto_sync"));
    const applied = newest(list, "auto_sync");
    assert.equal(applied.status, "succeeded", JSON.stringify(applied));
    assert.equal(applied.commit_id, commit);
    assert.equal(applied.detail, `Applied deployment ${d2} → ${d1}.`);
    assert.equal(await live(), d1);
    const audit = await t.db.query("SELECT owner_kind FROM audit_log WHERE action = 'gitopsRollbackSite'");
    assert.deepEqual(
      audit.rows.map((r) => r.owner_kind),
      ["org"],
    );
    // the site changed: archive pushes d1's files again; the manifest already says d1 (no commit)
    assert.equal(await scan(), 2);
    list = await settled((l) => l.filter((s) => s.kind === "gitops").length === 3);
    assert.equal(newest(list, "gitops").detail, `prod/${slug}.json is up to date.`);
    assert.equal(newest(list, "gitops").commit_id, commit);
    assert.equal(gl.project("acme/deploys")!.commits.length, commitsBefore);
    assert.equal(fileText(`acme/${slug}`, "index.html"), "<h1>v1</h1>");
    assert.equal(await scan(), 0);
  });

  test("auto-sync: a broken manifest or an unknown deployment fails with the reason; a fixed one applies", async () => {
    gl.userCommit("acme/deploys", `prod/${slug}.json`, "{ not json");
    assert.equal(await scan(), 1);
    let list = await settled((l) => l.filter((s) => s.kind === "auto_sync").length === 2);
    assert.equal(newest(list, "auto_sync").status, "failed");
    assert.match(newest(list, "auto_sync").error!, /not valid JSON/);

    const bad = { apiVersion: "hosting-platform/v1", kind: "StaticSite", spec: { deploymentId: randomUUID() } };
    gl.userCommit("acme/deploys", `prod/${slug}.json`, JSON.stringify(bad));
    assert.equal(await scan(), 1);
    list = await settled((l) => l.filter((s) => s.kind === "auto_sync").length === 3);
    assert.equal(newest(list, "auto_sync").status, "failed");
    assert.match(newest(list, "auto_sync").error!, /^The platform refused the change: No such deployment/);
    assert.equal(await live(), d1);

    gl.userCommit("acme/deploys", `prod/${slug}.json`, JSON.stringify({ ...bad, spec: { deploymentId: d2 } }));
    assert.equal(await scan(), 1);
    list = await settled((l) => l.filter((s) => s.kind === "auto_sync").length === 4);
    assert.equal(newest(list, "auto_sync").status, "succeeded");
    assert.equal(await live(), d2);
    await scan();
    await settled();
  });

  test("a failing GitLab: failed with the error after the retry; retry re-queues; succeeds once GitLab recovers", async () => {
    gl.failing = true;
    const d3 = await deploy({ "index.html": "<h1>v3</h1>" });
    assert.equal(await scan(), 2);
    const list = await settled(
      (l) => newest(l, "archive").status === "failed" && newest(l, "gitops").status === "failed",
      60_000,
    );
    for (const kind of ["archive", "gitops"]) {
      const s = newest(list, kind);
      assert.equal(s.attempts, 2, JSON.stringify(s));
      assert.match(s.error!, /^GitLab answered GET \/(groups|projects)\/\S+ with 500 Internal Server Error\.$/);
    }
    const done = list.find((s) => s.status === "succeeded")!;
    expectError(await req("POST", `/v1/org/git-syncs/${done.id}/retry`), 409, "conflict");

    gl.failing = false;
    for (const kind of ["archive", "gitops"]) {
      const res = await req("POST", `/v1/org/git-syncs/${newest(list, kind).id}/retry`);
      assert.equal(res.statusCode, 202, res.body);
      assert.equal(res.json().status, "queued");
      assert.equal(res.json().error, null);
    }
    const after = await settled(
      (l) => newest(l, "archive").status === "succeeded" && newest(l, "gitops").status === "succeeded",
    );
    assert.equal(newest(after, "archive").attempts, 3);
    assert.deepEqual([...gl.project(`acme/${slug}`)!.files.keys()], ["index.html"]);
    assert.equal(manifestOf(slug).spec.deploymentId, d3);
    expectError(await req("POST", `/v1/org/git-syncs/${newest(after, "archive").id}/retry`), 409, "conflict");
  });
});

describe("syncs of a company pod", () => {
  const podSlug = `gitops-web-${process.pid % 100000}`;
  let pod: { id: string };
  let v1: string;
  let v2: string;

  test("archive is skipped (no source kept); the manifest has its image; an image committed in GitLab rolls out", async () => {
    [v1, v2] = [await testImage("TEST_IMAGE_HTTPD_V1"), await testImage("TEST_IMAGE_HTTPD_V2")];
    const created = await req("POST", "/v1/pods", { name: podSlug, slug: podSlug, image: v1, port: 8080 }, ORG);
    assert.equal(created.statusCode, 201, created.body);
    pod = created.json();
    await waitOrgPod(pod.id, (p) => p.state === "running");
    await scan();
    let list = await settled((l) => l.some((s) => s.app_slug === podSlug && s.kind === "gitops"));
    const archive = newest(list, "archive", podSlug);
    assert.equal(archive.status, "skipped");
    assert.match(archive.error!, /keeps no source of pods/);
    assert.equal(newest(list, "gitops", podSlug).status, "succeeded");
    const m = manifestOf(podSlug);
    assert.deepEqual(
      m.items.map((i: { kind: string }) => i.kind),
      ["Deployment", "Service", "Ingress"],
    );
    assert.equal(m.items[0].spec.template.spec.containers[0].image, v1);
    assert.equal(m.items[0].spec.replicas, 1);
    assert.equal(m.items[2].spec.rules[0].host, `${podSlug}.apps.example.com`);

    m.items[0].spec.template.spec.containers[0].image = v2;
    gl.userCommit("acme/deploys", `prod/${podSlug}.json`, JSON.stringify(m, null, 2));
    await scan();
    list = await settled((l) => l.some((s) => s.app_slug === podSlug && s.kind === "auto_sync"));
    const applied = newest(list, "auto_sync", podSlug);
    assert.equal(applied.status, "succeeded", JSON.stringify(applied));
    assert.equal(applied.detail, `Applied image ${v1} → ${v2}.`);
    await waitOrgPod(pod.id, (p) => p.image === v2 && p.state === "running");

    m.items[0].spec.replicas = 3;
    gl.userCommit("acme/deploys", `prod/${podSlug}.json`, JSON.stringify(m));
    await scan();
    list = await settled((l) => l.filter((s) => s.app_slug === podSlug && s.kind === "auto_sync").length === 2);
    assert.equal(newest(list, "auto_sync", podSlug).status, "failed");
    assert.match(newest(list, "auto_sync", podSlug).error!, /A pod runs one replica/);
  });

  test("a settings change syncs every app again: new hosts in the manifests, archives left as they are, an unapplied manifest wins", async () => {
    const before = await syncs();
    const res = await req("PUT", "/v1/org/integrations/gitlab", {
      base_url: gl.url,
      group_path: "acme",
      archive_enabled: true,
      gitops_enabled: true,
      gitops_repo: "deploys",
      gitops_namespace: "prod",
      gitops_host_pattern: "{slug}.new.example.com",
      gitops_auto_sync: true,
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(await scan(), 3);
    const list = await settled((l) => l.length === before.length + 4);
    assert.equal(manifestOf(slug).spec.host, `${slug}.new.example.com`);
    // the pod's manifest in GitLab asks for 3 replicas, which failed to apply: the repository wins until fixed
    assert.equal(newest(list, "gitops", podSlug).status, "skipped");
    assert.match(newest(list, "gitops", podSlug).error!, /manifest change \(commit \w+\) not applied yet/);
    assert.equal(manifestOf(podSlug).items[0].spec.replicas, 3);
    assert.match(newest(list, "archive").detail!, /already holds/);
    assert.equal(newest(list, "archive", podSlug).status, "skipped");
  });
});
