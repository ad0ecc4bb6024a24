import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import path from "node:path";
import { call, signup, type TestApp } from "../helpers/app.js";
import { run } from "../registry/lib.js";
import { createPod, httpGet, waitPod } from "../apps/lib.js";
import { busyboxContext, contextTarGz, createBuildsTestApp, ended, startBuild, waitBuild } from "./lib.js";

const HTTPD = `FROM scratch
COPY busybox /bin/busybox
COPY index.html /www/index.html
CMD ["/bin/busybox", "httpd", "-f", "-p", "8080", "-h", "/www"]
`;

/**
 * A tiny Dockerfile built offline (FROM scratch + busybox-static), pushed to the owner's registry namespace,
 * deployed as a pod and served; then the pod updated from source (a second build FROM the first image,
 * pulled from the registry with the platform's own credentials) rolls to the new image.
 */
describe("builds: built offline, pushed, deployed and served", () => {
  let t: TestApp;
  let alice: { token: string; id: string };
  let first: any;
  const pulled: string[] = [];

  before(async () => {
    // the host's local image store is closed: pods and base images come from the registry only
    t = await createBuildsTestApp({ env: { APPS_ALLOW_LOCAL_IMAGES: "0" } });
    alice = await signup(t.app);
  });
  after(async () => {
    for (const p of (await call(t.app, { url: "/v1/pods", token: alice.token })).json())
      await call(t.app, { method: "DELETE", url: `/v1/pods/${p.id}`, token: alice.token });
    await new Promise((r) => setTimeout(r, 1000));
    await t?.close();
    // the images the pods pulled into the host's store
    for (const image of pulled) await run("podman", ["rmi", "--force", image]);
  });

  test("a FROM scratch build is pushed to the owner's namespace with its digest and log", async () => {
    const archive = await busyboxContext(HTTPD, { "index.html": "built v1\n" });
    const build = await startBuild(t, alice.token, archive);
    assert.equal(build.status, "awaiting_upload");
    first = await waitBuild(t, alice.token, build.id, ended);
    assert.equal(first.status, "succeeded", `${first.status_reason}\n${first.logs}`);
    const creds = (await call(t.app, { method: "POST", url: "/v1/registry/credentials", token: alice.token })).json();
    assert.equal(first.image, `${creds.registry}/${creds.namespace}/build:build-${build.id}`);
    assert.match(first.digest, /^sha256:[0-9a-f]{64}$/);
    assert.match(first.logs, /STEP 2\/4: COPY busybox \/bin\/busybox/);
    assert.match(first.logs, /==> pushing/);
    assert.ok(first.started_at && first.finished_at && first.queued_at);
    // the registry lists it; the build's working directory is gone
    const listed = (await call(t.app, { url: "/v1/registry", token: alice.token })).json();
    const repo = listed.repositories.find((r: any) => r.name === "build");
    assert.ok(repo?.tags.includes(`build-${build.id}`), JSON.stringify(listed));
    // removed in the job's last step, right after the status is written: wait for it, a little
    const dir = path.join(t.config.dataDir, "builds", build.id);
    for (let i = 0; i < 100 && existsSync(dir); i++) await new Promise((r) => setTimeout(r, 100));
    assert.equal(existsSync(dir), false);
    const list = (await call(t.app, { url: "/v1/builds", token: alice.token })).json();
    assert.equal(list[0].id, build.id);
    assert.equal(list[0].logs, undefined);
  });

  test("the built image deploys as a pod and serves", async () => {
    const pod = await createPod(t, alice.token, { name: "built-web", image: first.image, port: 8080 });
    pulled.push(first.image);
    const running = await waitPod(t, alice.token, pod.id, (p) => p.state === "running");
    assert.equal((await httpGet(`http://${running.address}/`)).body, "built v1\n");
  });

  test("updating the pod from source: a build FROM the first image rolls the pod to the new one", async () => {
    const pods = (await call(t.app, { url: "/v1/pods", token: alice.token })).json();
    const target = pods.find((p: any) => p.name === "built-web");
    const archive = contextTarGz({
      "app/Dockerfile": `FROM ${first.image}\nCOPY index.html /www/index.html\n`,
      "app/index.html": "built v2\n",
    });
    const build = await startBuild(t, alice.token, archive, { app: target.slug, context_path: "app" });
    assert.deepEqual(build.app, { kind: "pod", id: target.id, slug: target.slug });
    const done = await waitBuild(t, alice.token, build.id, ended);
    assert.equal(done.status, "succeeded", `${done.status_reason}\n${done.logs}`);
    assert.match(done.logs, new RegExp(`==> pulling ${first.image.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`));
    assert.equal(done.image, first.image.replace(/\/build:build-.*$/, `/${target.slug}:build-${build.id}`));
    assert.ok(done.deployed_at);
    pulled.push(done.image);
    const rolled = await waitPod(
      t,
      alice.token,
      target.id,
      (p) => p.image === done.image && p.state === "running" && p.serving_generation === p.generation,
    );
    assert.equal((await httpGet(`http://${rolled.address}/`)).body, "built v2\n");
  });

  test("a pod group updated from source: named by a member's slug, every member rolls to the new image", async () => {
    const res = await call(t.app, {
      method: "POST",
      url: "/v1/pod-groups",
      token: alice.token,
      body: { name: "built-group", image: first.image, port: 8080, replica_min: 1, replica_max: 1 },
    });
    assert.equal(res.statusCode, 201, res.body);
    const group = res.json();
    const member = group.replicas[0];
    await waitPod(t, alice.token, member.id, (p) => p.state === "running");
    const archive = contextTarGz({
      Dockerfile: `FROM ${first.image}\nCOPY index.html /www/index.html\n`,
      "index.html": "group v2\n",
    });
    const build = await startBuild(t, alice.token, archive, { app: member.slug });
    assert.deepEqual(build.app, { kind: "group", id: group.id, slug: group.slug });
    const done = await waitBuild(t, alice.token, build.id, ended);
    assert.equal(done.status, "succeeded", `${done.status_reason}\n${done.logs}`);
    pulled.push(done.image);
    const g = (await call(t.app, { url: `/v1/pod-groups/${group.id}`, token: alice.token })).json();
    assert.equal(g.image, done.image);
    const rolled = await waitPod(
      t,
      alice.token,
      g.replicas[0].id,
      (p) => p.image === done.image && p.state === "running" && p.serving_generation === p.generation,
    );
    assert.equal((await httpGet(`http://${rolled.address}/`)).body, "group v2\n");
    await call(t.app, { method: "DELETE", url: `/v1/pod-groups/${group.id}`, token: alice.token });
  });

  test("a RUN step has no network: the host's loopback (the control store, the registry) is out of reach", async () => {
    const registry = first.image.split("/")[0];
    const archive = await busyboxContext(
      `FROM scratch\nCOPY busybox /bin/busybox\nRUN ["/bin/busybox", "sh", "-c", "/bin/busybox ip -o link; /bin/busybox wget -q -T 3 -O- http://${registry}/v2/ && echo REACHED || echo UNREACHABLE"]\n`,
    );
    const build = await startBuild(t, alice.token, archive);
    const done = await waitBuild(t, alice.token, build.id, ended);
    assert.equal(done.status, "succeeded", `${done.status_reason}\n${done.logs}`);
    assert.match(done.logs, /UNREACHABLE/);
    assert.doesNotMatch(done.logs, /REACHED\n/);
    assert.doesNotMatch(done.logs, /eth0|ens\d/);
  });
});
