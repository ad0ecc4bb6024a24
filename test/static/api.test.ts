/**
 * The static sites API through HTTP: sites (slug rules, one slug namespace with pods), deployments (upload,
 * finalize, statuses, rollback), instance-limited keys (static:write:<slug> covers its site's deployment finalize
 * and nothing else), deletion and the sweep.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { call, expectError, scopedKey, signup } from "../helpers/app.js";
import { inTransaction } from "../../src/store/db.js";
import { sweep } from "../../src/static/sweep.js";
import type { StaticState } from "../../src/static/module.js";
import { APPS_DOMAIN, createSite, deploy, staticApp, tarGz, upload, zipArchive, type StaticApp } from "./lib.js";

let s: StaticApp;
let user: { token: string; id: string };
let other: { token: string; id: string };

before(async () => {
  s = await staticApp({ env: { STATIC_KEEP_DEPLOYMENTS: "2" } });
  user = await signup(s.t.app);
  other = await signup(s.t.app);
});
after(async () => s?.close());

const site = (v: string) => tarGz({ "dist/index.html": `<h1>${v}</h1>`, "dist/app.js": `console.log("${v}")` }, "dist");

describe("sites", () => {
  test("create: 201 with url, visibility, no live deployment; list, get by slug and id, patch", async () => {
    const created = await createSite(s.t, user.token, { name: "blog", slug: "my-blog", spa: true });
    assert.equal(created.slug, "my-blog");
    assert.equal(created.url, `http://my-blog.${APPS_DOMAIN}:0`);
    assert.equal(created.visibility, "public");
    assert.equal(created.spa, true);
    assert.equal(created.not_found_page, null);
    assert.equal(created.live_deployment_id, null);
    const auto = await createSite(s.t, user.token, { name: "autoslug" });
    assert.match(auto.slug, /^autoslug-[0-9a-f]{6}$/);

    const list = await call(s.t.app, { url: "/v1/static", token: user.token });
    assert.deepEqual(
      list.json().map((x: { slug: string }) => x.slug),
      ["my-blog", auto.slug],
    );
    assert.equal((await call(s.t.app, { url: `/v1/static/${created.id}`, token: user.token })).json().slug, "my-blog");
    const patched = await call(s.t.app, {
      method: "PATCH",
      url: "/v1/static/my-blog",
      token: user.token,
      body: { spa: false, not_found_page: "./errors/404.html" },
    });
    assert.equal(patched.statusCode, 200, patched.body);
    assert.equal(patched.json().spa, false);
    assert.equal(patched.json().not_found_page, "errors/404.html");
    expectError(
      await call(s.t.app, {
        method: "PATCH",
        url: "/v1/static/my-blog",
        token: user.token,
        body: { not_found_page: "../x.html" },
      }),
      400,
      "invalid_request",
    );
    // another account sees nothing of it
    expectError(await call(s.t.app, { url: "/v1/static/my-blog", token: other.token }), 404, "not_found");
    assert.deepEqual((await call(s.t.app, { url: "/v1/static", token: other.token })).json(), []);
    const audit = await s.t.db.query("SELECT action FROM audit_log WHERE account_id = $1 ORDER BY id", [user.id]);
    assert.ok(audit.rows.some((r) => r.action === "createStaticSite"));
    assert.ok(audit.rows.some((r) => r.action === "updateStaticSite"));
  });

  test("slug rules: bad_slug, reserved, taken platform-wide (409 slug_taken)", async () => {
    for (const body of [{ name: "Bad Name" }, { name: "ok-name", slug: "-bad" }, { name: "ok-name", slug: "x" }])
      expectError(await call(s.t.app, { method: "POST", url: "/v1/static", token: user.token, body }), 400, "bad_slug");
    expectError(
      await call(s.t.app, {
        method: "POST",
        url: "/v1/static",
        token: user.token,
        body: { name: "x1x", slug: "deployments" },
      }),
      400,
      "bad_slug",
    );
    expectError(
      await call(s.t.app, {
        method: "POST",
        url: "/v1/static",
        token: user.token,
        body: { name: "uuid-like", slug: "0f8fad5b-d9cb-469f-a165-70867728950e" },
      }),
      400,
      "bad_slug",
    );
    await createSite(s.t, user.token, { name: "taken", slug: "taken-slug" });
    expectError(
      await call(s.t.app, {
        method: "POST",
        url: "/v1/static",
        token: other.token,
        body: { name: "mine", slug: "taken-slug" },
      }),
      409,
      "slug_taken",
    );
  });

  test("a slug is shared with pods: neither takes the other's", async () => {
    await createSite(s.t, user.token, { name: "shared", slug: "shared-slug" });
    const kernel = s.t.platform.kernel;
    // the kernel's claim, as the apps area makes it inside its creating transaction
    assert.equal(
      await inTransaction(s.t.db, (tx) => kernel.appSlugTakenElsewhere(tx, "shared-slug", "pod_routes")),
      true,
    );
    assert.equal(
      await inTransaction(s.t.db, (tx) => kernel.appSlugTakenElsewhere(tx, "free-slug", "pod_routes")),
      false,
    );
    const pod = await call(s.t.app, {
      method: "POST",
      url: "/v1/pods",
      token: user.token,
      body: { name: "podslug", slug: "shared-slug", image: "docker.io/library/busybox:1.36" },
    });
    if (pod.statusCode === 503) {
      console.log("# no container runtime here: the kernel-level claim above is the check");
      return;
    }
    expectError(pod, 409, "slug_taken");
    // and a site cannot take a pod's slug (the pod stays "creating": this app runs no jobs, so no container)
    const made = await call(s.t.app, {
      method: "POST",
      url: "/v1/pods",
      token: user.token,
      body: { name: "podslug", slug: "pod-owned", image: "docker.io/library/busybox:1.36" },
    });
    assert.equal(made.statusCode, 201, made.body);
    expectError(
      await call(s.t.app, {
        method: "POST",
        url: "/v1/static",
        token: user.token,
        body: { name: "steal", slug: "pod-owned" },
      }),
      409,
      "slug_taken",
    );
    await call(s.t.app, { method: "DELETE", url: `/v1/pods/${made.json().id}`, token: user.token });
  });
});

describe("deployments", () => {
  test("create → upload → finalize: statuses, upload_url, counts; a second deployment supersedes; rollback", async () => {
    await createSite(s.t, user.token, { name: "flow", slug: "flow-site" });
    const created = await call(s.t.app, { method: "POST", url: "/v1/static/flow-site/deployments", token: user.token });
    assert.equal(created.statusCode, 201, created.body);
    const d = created.json();
    assert.equal(d.status, "awaiting_upload");
    assert.equal(d.upload_url, `http://localhost:80/v1/static/flow-site/deployments/${d.id}/files`);
    assert.equal(d.max_bytes, 100 * 1024 * 1024);
    expectError(
      await call(s.t.app, {
        method: "POST",
        url: `/v1/static/flow-site/deployments/${d.id}/finalize`,
        token: user.token,
      }),
      409,
      "not_uploaded",
    );
    const up = await upload(s.t, user.token, "flow-site", d.id, await site("v1"), "application/gzip");
    assert.equal(up.statusCode, 200, up.body);
    assert.equal(up.json().status, "uploaded");
    assert.equal(up.json().file_count, 2);
    assert.equal(up.json().bytes, "<h1>v1</h1>".length + 'console.log("v1")'.length);
    assert.equal(up.json().upload_url, null);
    // the dist/ folder wrapping every file was dropped
    const paths = await s.t.db.query("SELECT path FROM static_files WHERE deployment_id = $1 ORDER BY path", [d.id]);
    assert.deepEqual(
      paths.rows.map((r) => r.path),
      ["app.js", "index.html"],
    );
    expectError(
      await upload(s.t, user.token, "flow-site", d.id, await site("again"), "application/gzip"),
      409,
      "conflict",
    );

    const fin = await call(s.t.app, {
      method: "POST",
      url: `/v1/static/flow-site/deployments/${d.id}/finalize`,
      token: user.token,
    });
    assert.equal(fin.statusCode, 200, fin.body);
    assert.equal(fin.json().status, "live");
    assert.ok(fin.json().finalized_at);
    // finalizing the live one again answers it unchanged
    const again = await call(s.t.app, {
      method: "POST",
      url: `/v1/static/flow-site/deployments/${d.id}/finalize`,
      token: user.token,
    });
    assert.equal(again.json().status, "live");

    const zip = zipArchive([{ name: "index.html", body: "<h1>v2</h1>" }]);
    const second = await deploy(s.t, user.token, "flow-site", zip, "application/zip");
    assert.equal(second.status, "live");
    const first = await call(s.t.app, { url: `/v1/static/flow-site/deployments/${d.id}`, token: user.token });
    assert.equal(first.json().status, "superseded");
    expectError(
      await call(s.t.app, {
        method: "POST",
        url: `/v1/static/flow-site/deployments/${d.id}/finalize`,
        token: user.token,
      }),
      409,
      "conflict",
    );
    assert.equal(
      (await call(s.t.app, { url: "/v1/static/flow-site", token: user.token })).json().live_deployment_id,
      second.id,
    );

    const back = await call(s.t.app, {
      method: "POST",
      url: "/v1/static/flow-site/rollback",
      token: user.token,
      body: { deployment_id: d.id },
    });
    assert.equal(back.statusCode, 200, back.body);
    assert.equal(back.json().status, "live");
    assert.equal(
      (await call(s.t.app, { url: "/v1/static/flow-site", token: user.token })).json().live_deployment_id,
      d.id,
    );
    const pending = await call(s.t.app, { method: "POST", url: "/v1/static/flow-site/deployments", token: user.token });
    expectError(
      await call(s.t.app, {
        method: "POST",
        url: "/v1/static/flow-site/rollback",
        token: user.token,
        body: { deployment_id: pending.json().id },
      }),
      409,
      "conflict",
    );
    expectError(
      await call(s.t.app, {
        method: "POST",
        url: "/v1/static/flow-site/rollback",
        token: user.token,
        body: { deployment_id: "00000000-0000-0000-0000-000000000000" },
      }),
      404,
      "not_found",
    );
    const list = await call(s.t.app, { url: "/v1/static/flow-site/deployments", token: user.token });
    assert.deepEqual(
      list.json().map((x: { status: string }) => x.status),
      ["awaiting_upload", "superseded", "live"],
    );
  });

  test("a deployment of another site is not reachable through this site's path", async () => {
    await createSite(s.t, user.token, { name: "site-aa", slug: "site-aa" });
    await createSite(s.t, user.token, { name: "site-bb", slug: "site-bb" });
    const d = await call(s.t.app, { method: "POST", url: "/v1/static/site-bb/deployments", token: user.token });
    expectError(await call(s.t.app, { url: `/v1/static/site-aa/deployments/${d.json().id}`, token: user.token }), 404);
    expectError(
      await upload(s.t, user.token, "site-aa", d.json().id, await site("x"), "application/gzip"),
      404,
      "not_found",
    );
  });
});

describe("instance-limited keys", () => {
  test("static:write:<slug> acts on that site only; its deployment finalize by id; create and others 403", async () => {
    await createSite(s.t, user.token, { name: "keyed", slug: "keyed-site" });
    await createSite(s.t, user.token, { name: "notmine", slug: "other-site" });
    const key = await scopedKey(s.t.app, user.token, ["static:write:keyed-site"]);
    const list = await call(s.t.app, { url: "/v1/static", token: key });
    assert.deepEqual(
      list.json().map((x: { slug: string }) => x.slug),
      ["keyed-site"],
    );
    expectError(
      await call(s.t.app, { method: "POST", url: "/v1/static", token: key, body: { name: "nope" } }),
      403,
      "scope_insufficient",
    );
    expectError(await call(s.t.app, { url: "/v1/static/other-site", token: key }), 403, "scope_insufficient");
    expectError(
      await call(s.t.app, { method: "POST", url: "/v1/static/other-site/deployments", token: key }),
      403,
      "scope_insufficient",
    );

    const d = await call(s.t.app, { method: "POST", url: "/v1/static/keyed-site/deployments", token: key });
    assert.equal(d.statusCode, 201, d.body);
    const up = await upload(s.t, key, "keyed-site", d.json().id, await site("k"), "application/gzip");
    assert.equal(up.statusCode, 200, up.body);
    const fin = await call(s.t.app, {
      method: "POST",
      url: `/v1/static/deployments/${d.json().id}/finalize`,
      token: key,
    });
    assert.equal(fin.statusCode, 200, fin.body);
    assert.equal(fin.json().status, "live");

    // a deployment of another site, by id: 403 for the key, 404 for another account's full token
    const theirs = await call(s.t.app, { method: "POST", url: "/v1/static/other-site/deployments", token: user.token });
    expectError(
      await call(s.t.app, { method: "POST", url: `/v1/static/deployments/${theirs.json().id}/finalize`, token: key }),
      403,
      "scope_insufficient",
    );
    expectError(
      await call(s.t.app, {
        method: "POST",
        url: `/v1/static/deployments/${theirs.json().id}/finalize`,
        token: other.token,
      }),
      404,
      "not_found",
    );
    // a read key cannot write
    const reader = await scopedKey(s.t.app, user.token, ["static:read:keyed-site"]);
    assert.equal((await call(s.t.app, { url: "/v1/static/keyed-site/deployments", token: reader })).statusCode, 200);
    expectError(
      await call(s.t.app, { method: "POST", url: "/v1/static/keyed-site/deployments", token: reader }),
      403,
      "scope_insufficient",
    );
  });
});

describe("deletion and the sweep", () => {
  test("delete frees the slug; the sweep prunes old deployments (keeping the live one) and unused contents", async () => {
    const state = s.t.platform.state<StaticState>("static");
    await createSite(s.t, user.token, { name: "pruned", slug: "pruned-site" });
    const d1 = await deploy(s.t, user.token, "pruned-site", await site("p1"));
    const d2 = await deploy(s.t, user.token, "pruned-site", await site("p2"));
    const d3 = await deploy(s.t, user.token, "pruned-site", await site("p3"));
    // STATIC_KEEP_DEPLOYMENTS=2 here; the sweep deletes only contents untouched for an hour
    await s.t.db.query("UPDATE static_blobs SET touched_at = now() - interval '2 hours'");
    const swept = await sweep(s.t.db, state.config, s.t.platform.log);
    assert.ok(swept.deployments >= 1);
    expectError(await call(s.t.app, { url: `/v1/static/pruned-site/deployments/${d1.id}`, token: user.token }), 404);
    for (const d of [d2, d3])
      assert.equal(
        (await call(s.t.app, { url: `/v1/static/pruned-site/deployments/${d.id}`, token: user.token })).statusCode,
        200,
      );
    const orphans = await s.t.db.query(
      "SELECT count(*)::int AS n FROM static_blobs b WHERE NOT EXISTS (SELECT 1 FROM static_files f WHERE f.hash = b.hash)",
    );
    assert.equal(orphans.rows[0].n, 0);

    const del = await call(s.t.app, { method: "DELETE", url: "/v1/static/pruned-site", token: user.token });
    assert.equal(del.statusCode, 204, del.body);
    expectError(await call(s.t.app, { url: "/v1/static/pruned-site", token: user.token }), 404);
    const again = await createSite(s.t, other.token, { name: "reborn", slug: "pruned-site" });
    assert.equal(again.slug, "pruned-site");
    await s.t.db.query("UPDATE static_blobs SET touched_at = now() - interval '2 hours'");
    await sweep(s.t.db, state.config, s.t.platform.log);
    const left = await s.t.db.query("SELECT count(*)::int AS n FROM static_deployments WHERE id = ANY($1)", [
      [d2.id, d3.id],
    ]);
    assert.equal(left.rows[0].n, 0);
  });
});
