import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { call, expectError, signup, type TestApp } from "../helpers/app.js";
import { busyboxContext, createBuildsTestApp, ended, startBuild, waitBuild } from "./lib.js";

/**
 * Build-time values (issue 29) with real buildah: a build argument and a build secret reach the build; the
 * secret is sealed at rest, shown back only as a fingerprint, and absent from the build log, every API answer
 * and every audit row.
 */
describe("builds: build_args and build_secrets", () => {
  let t: TestApp;
  let user: { token: string; id: string };
  const SECRET = "npm-token-5c1e9a7b3d";

  before(async () => {
    t = await createBuildsTestApp();
    user = await signup(t.app);
  });
  after(() => t?.close());

  const hidden = (text: string) =>
    assert.ok(!text.includes(SECRET), `the build secret shows in: ${text.slice(0, 600)}`);

  test("the build uses the secret; it never shows in the log, an answer or the audit trail", async () => {
    expectError(
      await call(t.app, {
        method: "POST",
        url: "/v1/builds",
        token: user.token,
        body: { build_secrets: { "a-b": "x" } },
      }),
      400,
      "invalid_request",
    );
    const archive = await busyboxContext(
      [
        "FROM scratch",
        "COPY busybox /bin/busybox",
        "ARG GREETING",
        // the secret is read (its length proves it arrived) and printed, which the log must mask
        'RUN --mount=type=secret,id=TOKEN ["/bin/busybox", "sh", "-c", "echo arg=$GREETING; echo secret=$(/bin/busybox cat /run/secrets/TOKEN); /bin/busybox cat /run/secrets/TOKEN | /bin/busybox wc -c"]',
        "",
      ].join("\n"),
    );
    const build = await startBuild(t, user.token, archive, {
      build_args: { GREETING: "hello-arg" },
      build_secrets: { TOKEN: SECRET },
    });
    hidden(JSON.stringify(build));
    assert.deepEqual(build.build_args, { GREETING: "hello-arg" });
    assert.match(build.build_secrets.TOKEN.fingerprint, /^hmac-sha256:[0-9a-f]{32}$/);

    const done = await waitBuild(t, user.token, build.id, ended);
    assert.equal(done.status, "succeeded", done.logs);
    assert.match(done.logs, /arg=hello-arg/);
    assert.match(done.logs, /secret=\[secret TOKEN\]/);
    assert.match(done.logs, new RegExp(`^\\s*${SECRET.length}\\s*$`, "m"), done.logs);
    hidden(done.logs);
    hidden(JSON.stringify(done));
    hidden((await call(t.app, { url: "/v1/builds", token: user.token })).body);

    const stored = await t.db.query("SELECT * FROM builds WHERE id = $1", [build.id]);
    hidden(JSON.stringify(stored.rows)); // sealed at rest
    assert.ok(stored.rows[0].build_secrets_sealed.startsWith("enc:v1:"));
    hidden(JSON.stringify((await t.db.query("SELECT * FROM audit_log WHERE account_id = $1", [user.id])).rows));
    hidden(JSON.stringify((await t.db.query("SELECT * FROM idempotency_keys")).rows));
    hidden((await call(t.app, { url: "/v1/me/audit", token: user.token })).body);
  });
});
