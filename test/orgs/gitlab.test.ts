/**
 * The GitLab integration's settings and connection check through HTTP (src/orgs/README.md, "GitLab integration and
 * syncs"), against a local GitLab (test/fakes/gitlab.ts): PUT/GET (token masked, sealed at rest, kept when omitted),
 * DELETE (the sync history stays), /test with stored and body values (wrong token, unknown group, unreachable and
 * silent servers: ok false with a sentence, never a 500), role checks; and the manifests' shapes.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import http from "node:http";
import net from "node:net";
import type { AddressInfo } from "node:net";
import { call, createTestApp, expectError, type TestApp } from "../helpers/app.js";
import { startFakeGitlab, type FakeGitlab } from "../fakes/gitlab.js";
import { buildManifest, parseManifest, render } from "../../src/orgs/gitlab/manifest.js";
import { makeOrg, type Person, type TestOrg } from "./lib.js";

const TOKEN = "glpat-Secret-Token-ABCD1234";
const URL = "/v1/org/integrations/gitlab";

let t: TestApp;
let gl: FakeGitlab;
let org: TestOrg;
let admin: Person;
let silent: net.Server;
let silentUrl: string;

before(async () => {
  t = await createTestApp({ env: { GITLAB_TIMEOUT_MS: "700" } });
  gl = await startFakeGitlab({ token: TOKEN, groups: [{ name: "Acme Platform", path: "acme/platform" }] });
  org = await makeOrg(t, { admins: 1, members: 1 });
  admin = org.admins[0];
  // accepts connections and never answers
  silent = net.createServer(() => {});
  await new Promise<void>((r) => silent.listen(0, "127.0.0.1", r));
  silentUrl = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
});
after(async () => {
  await gl?.close();
  silent?.close();
  await t?.close();
});

const req = (method: "GET" | "PUT" | "POST" | "DELETE", url: string, who: Person, body?: unknown) =>
  call(t.app, { method, url, token: who.token, body });

const settings = (over: Record<string, unknown> = {}) => ({
  base_url: `${gl.url}/`,
  group_path: "acme/platform",
  archive_enabled: true,
  gitops_enabled: true,
  gitops_repo: "deploys",
  gitops_namespace: "prod",
  gitops_host_pattern: "{slug}.apps.example.com",
  gitops_auto_sync: false,
  ...over,
});

describe("GitLab integration settings", () => {
  test("GET before any PUT: not configured", async () => {
    const res = await req("GET", URL, admin);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().configured, false);
    assert.equal(res.json().token, null);
    assert.equal(res.json().token_set, false);
  });

  test("PUT: the first needs a token; 201, token masked, sealed at rest; omitted later: kept", async () => {
    expectError(await req("PUT", URL, admin, settings()), 400, "invalid_request");
    const created = await req("PUT", URL, admin, settings({ token: TOKEN }));
    assert.equal(created.statusCode, 201, created.body);
    const view = created.json();
    assert.equal(view.configured, true);
    assert.equal(view.base_url, gl.url);
    assert.equal(view.token, "****1234");
    assert.equal(view.token_set, true);
    assert.equal(view.gitops_namespace, "prod");
    assert.ok(!created.body.includes(TOKEN));

    const stored = await t.db.query("SELECT token_sealed FROM org_gitlab WHERE org_id = $1", [org.id]);
    assert.match(stored.rows[0].token_sealed, /^enc:v1:/);
    assert.ok(!stored.rows[0].token_sealed.includes("Secret"));
    assert.equal(t.platform.secrets.open(stored.rows[0].token_sealed, "org_gitlab.token_sealed"), TOKEN);

    const again = await req("PUT", URL, admin, settings({ archive_enabled: false }));
    assert.equal(again.statusCode, 200, again.body);
    assert.equal(again.json().archive_enabled, false);
    assert.equal(again.json().token, "****1234");
    const got = await req("GET", URL, admin);
    assert.equal(got.statusCode, 200);
    assert.equal(got.json().token, "****1234");
    assert.ok(!got.body.includes(TOKEN));
    const kept = await t.db.query("SELECT token_sealed FROM org_gitlab WHERE org_id = $1", [org.id]);
    assert.equal(t.platform.secrets.open(kept.rows[0].token_sealed, "org_gitlab.token_sealed"), TOKEN);
    // the stored token still works
    assert.equal((await req("POST", `${URL}/test`, admin)).json().ok, true);
    // ... and never goes to another host: a new host needs its token
    expectError(await req("PUT", URL, admin, settings({ base_url: "http://127.0.0.2:9" })), 400, "invalid_request");
    const elsewhere = await req("POST", `${URL}/test`, admin, { base_url: "http://127.0.0.2:9" });
    assert.equal(elsewhere.json().ok, false);
    assert.match(elsewhere.json().error, /never sent elsewhere/);
    assert.ok(!gl.requests.some((r) => r.token === undefined));

    const audit = await t.db.query("SELECT action, owner_kind FROM audit_log WHERE account_id = $1 ORDER BY id", [
      admin.id,
    ]);
    assert.ok(audit.rows.some((r) => r.action === "putOrgGitlab" && r.owner_kind === "org"));
  });

  test("PUT refuses what cannot work: GitOps without its fields, a base_url that is not http(s), unknown fields", async () => {
    for (const f of ["gitops_repo", "gitops_namespace", "gitops_host_pattern"])
      expectError(await req("PUT", URL, admin, settings({ [f]: null })), 400, "invalid_request");
    expectError(
      await req("PUT", URL, admin, settings({ base_url: "ftp://gitlab.example.com" })),
      400,
      "invalid_request",
    );
    expectError(await req("PUT", URL, admin, settings({ base_url: "not a url" })), 400, "invalid_request");
    // a bare # made every API path a fragment: the server's page answered as the group, and the view was a 500
    for (const base_url of [`${gl.url}/api/v4/version#`, `${gl.url}/api/v4/version?`, `http://u:p@127.0.0.1:9`]) {
      expectError(await req("PUT", URL, admin, settings({ base_url })), 400, "invalid_request");
      const check = await req("POST", `${URL}/test`, admin, { base_url, group_path: "acme/platform", token: TOKEN });
      expectError(check, 400, "invalid_request");
    }
    expectError(await req("PUT", URL, admin, settings({ gitops_host_pattern: "apps.example.com" })), 400);
    expectError(await req("PUT", URL, admin, settings({ color: "red" })), 400);
    // nothing changed
    assert.equal((await req("GET", URL, admin)).json().gitops_repo, "deploys");
  });

  test("test: stored values → version and group, GitLab called with PRIVATE-TOKEN and the URL-encoded path", async () => {
    gl.requests.length = 0;
    const res = await req("POST", `${URL}/test`, admin);
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), {
      ok: true,
      gitlab_version: "17.5.1-ee",
      group_name: "Acme Platform",
      group_web_url: `${gl.url}/groups/acme/platform`,
      error: null,
    });
    assert.deepEqual(
      gl.requests.map((r) => [r.method, r.path.split("?")[0], r.token]),
      [
        ["GET", "/api/v4/version", TOKEN],
        ["GET", "/api/v4/groups/acme%2Fplatform", TOKEN],
      ],
    );
  });

  test("test: failures are ok false with a sentence (wrong token, unknown group, unreachable, silent)", async () => {
    const wrong = await req("POST", `${URL}/test`, admin, { token: "glpat-wrong-token-0000" });
    assert.equal(wrong.statusCode, 200, wrong.body);
    assert.equal(wrong.json().ok, false);
    assert.match(wrong.json().error, /refused the token \(401/);
    assert.equal(wrong.json().gitlab_version, null);

    const group = await req("POST", `${URL}/test`, admin, { group_path: "acme/nothing" });
    assert.equal(group.json().ok, false);
    assert.equal(group.json().gitlab_version, "17.5.1-ee");
    assert.match(group.json().error, /acme\/nothing was not found/);

    const closed = net.createServer();
    await new Promise<void>((r) => closed.listen(0, "127.0.0.1", r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    const down = await req("POST", `${URL}/test`, admin, { base_url: `http://127.0.0.1:${port}`, token: TOKEN });
    assert.equal(down.statusCode, 200, down.body);
    assert.equal(down.json().ok, false);
    assert.match(down.json().error, /could not be reached \(ECONNREFUSED\)/);

    const started = Date.now();
    const hung = await req("POST", `${URL}/test`, admin, { base_url: silentUrl, token: TOKEN });
    assert.equal(hung.statusCode, 200, hung.body);
    assert.equal(hung.json().ok, false);
    assert.match(hung.json().error, /did not answer GET \/version within 700 ms/);
    assert.ok(Date.now() - started < 5000);

    // a redirect (here to the metadata address) is not followed; what a server says is never repeated
    const odd = http.createServer((q, r) => {
      if (q.url!.startsWith("/redir/")) r.writeHead(302, { location: "http://169.254.169.254/latest/meta-data/" });
      else r.writeHead(q.url!.startsWith("/denied/") ? 401 : 500, { "content-type": "application/json" });
      r.end(JSON.stringify({ message: "internal-secret-xyz" }));
    });
    await new Promise<void>((r) => odd.listen(0, "127.0.0.1", r));
    const oddUrl = `http://127.0.0.1:${(odd.address() as AddressInfo).port}`;
    try {
      const redirected = await req("POST", `${URL}/test`, admin, { base_url: `${oddUrl}/redir`, token: TOKEN });
      assert.equal(redirected.json().ok, false);
      assert.match(redirected.json().error, /redirect \(302\)/);
      assert.doesNotMatch(redirected.json().error, /169\.254/);
      for (const path of ["/denied", "/broken"]) {
        const said = await req("POST", `${URL}/test`, admin, { base_url: `${oddUrl}${path}`, token: TOKEN });
        assert.equal(said.json().ok, false);
        assert.match(said.json().error, /401 Unauthorized|500 Internal Server Error/);
        assert.doesNotMatch(said.json().error, /internal-secret/);
      }
    } finally {
      odd.close();
    }

    // a base_url that is no http(s) URL is the request's fault: 400, nothing fetched
    const bad = await req("POST", `${URL}/test`, admin, { base_url: "file:///etc/passwd", token: TOKEN });
    expectError(bad, 400, "invalid_request");
    assert.match(bad.json().error.message, /http or https/);
  });

  test("roles: members 403 forbidden_role, outsiders 404 not_found, on every row", async () => {
    const member = org.members[0];
    const rows: ["GET" | "PUT" | "POST" | "DELETE", string, unknown?][] = [
      ["GET", URL],
      ["PUT", URL, settings({ token: TOKEN })],
      ["DELETE", URL],
      ["POST", `${URL}/test`],
      ["GET", "/v1/org/git-syncs"],
      ["POST", `/v1/org/git-syncs/${randomUUID()}/retry`],
    ];
    for (const [method, url, body] of rows) {
      expectError(await req(method, url, member, body), 403, "forbidden_role");
      expectError(await req(method, url, org.outsider, body), 404, "not_found");
    }
  });

  test("DELETE removes settings and token, keeps the sync history; a second DELETE says deleted false", async () => {
    const id = randomUUID();
    await t.db.query(
      `INSERT INTO org_git_syncs (id, org_id, app_kind, app_id, app_slug, kind, status, error)
       VALUES ($1, $2, 'site', $3, 'kept-site', 'archive', 'failed', 'GitLab answered 500')`,
      [id, org.id, randomUUID()],
    );
    const res = await req("DELETE", URL, admin);
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), { deleted: true });
    assert.equal((await t.db.query("SELECT 1 FROM org_gitlab WHERE org_id = $1", [org.id])).rowCount, 0);
    const view = (await req("GET", URL, admin)).json();
    assert.equal(view.configured, false);
    assert.equal(view.token_set, false);
    const history = (await req("GET", "/v1/org/git-syncs", admin)).json().items;
    assert.deepEqual(
      history.map((s: { id: string; status: string }) => [s.id, s.status]),
      [[id, "failed"]],
    );
    assert.deepEqual((await req("DELETE", URL, admin)).json(), { deleted: false });
    // without settings the check names what is missing
    const check = (await req("POST", `${URL}/test`, admin)).json();
    assert.equal(check.ok, false);
    assert.match(check.error, /No base_url/);
    // body values alone are enough
    const direct = await req("POST", `${URL}/test`, admin, {
      base_url: gl.url,
      group_path: "acme/platform",
      token: TOKEN,
    });
    assert.equal(direct.json().ok, true, direct.body);
  });

  test("git-syncs: ?limit bounds (1-200), unknown and foreign ids 404", async () => {
    expectError(await req("GET", "/v1/org/git-syncs?limit=0", admin), 400);
    expectError(await req("GET", "/v1/org/git-syncs?limit=201", admin), 400);
    assert.equal((await req("GET", "/v1/org/git-syncs?limit=1", admin)).json().items.length, 1);
    expectError(await req("POST", `/v1/org/git-syncs/${randomUUID()}/retry`, admin), 404, "not_found");
    expectError(await req("POST", "/v1/org/git-syncs/not-an-id/retry", admin), 404, "not_found");
    const other = await makeOrg(t, { admins: 1, members: 0 });
    const mine = (await req("GET", "/v1/org/git-syncs", admin)).json().items[0].id;
    expectError(await req("POST", `/v1/org/git-syncs/${mine}/retry`, other.admins[0]), 404, "not_found");
  });
});

describe("manifests", () => {
  const spec = { image: "registry.example.com/web:2", size: "micro", port: 8080, targetCpuPercent: 60 };
  const app = { kind: "pod-group" as const, id: randomUUID(), slug: "web" };
  const at = { namespace: "prod", host: "web.apps.example.com" };

  test("a group with bounds: Deployment, Service, Ingress, HPA; read back as image and bounds", () => {
    const m = buildManifest(app, { kind: "pod-group", spec: { ...spec, replicaMin: 2, replicaMax: 5 } }, at) as any;
    assert.deepEqual(
      m.items.map((i: { kind: string }) => i.kind),
      ["Deployment", "Service", "Ingress", "HorizontalPodAutoscaler"],
    );
    assert.equal(m.items[2].spec.rules[0].host, "web.apps.example.com");
    assert.equal(m.items[0].metadata.namespace, "prod");
    assert.deepEqual(parseManifest("pod-group", render(m)), {
      kind: "pod-group",
      image: "registry.example.com/web:2",
      replicaMin: 2,
      replicaMax: 5,
    });
    m.items[3].spec.maxReplicas = 1;
    assert.throws(() => parseManifest("pod-group", render(m)), /maxReplicas \(1\) is below minReplicas \(2\)/);
  });

  test("a pod without a port: a Deployment with 1 replica only; broken manifests say why", () => {
    const m = buildManifest(
      { ...app, kind: "pod" },
      { kind: "pod", spec: { ...spec, port: null, replicaMin: 1, replicaMax: 1, targetCpuPercent: null } },
      at,
    ) as any;
    assert.deepEqual(
      m.items.map((i: { kind: string }) => i.kind),
      ["Deployment"],
    );
    assert.equal(m.items[0].spec.replicas, 1);
    assert.throws(() => parseManifest("pod", "{"), /not valid JSON/);
    assert.throws(() => parseManifest("pod", JSON.stringify({ kind: "List", items: [] })), /no Deployment/);
    assert.throws(() => parseManifest("site", render(m)), /StaticSite with spec.deploymentId/);
  });
});
