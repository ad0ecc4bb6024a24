/**
 * The Node edge alone, the fallback where nginx or its Lua module is missing (issue 32; README "The nginx data
 * plane"): the edge's own test files, unchanged, run again with EDGE_DATA_PLANE=node in a child test runner, while
 * the rest of the run uses the default, nginx in front (CI installs it: .ci/run). Where nginx is missing the default
 * run already is the Node edge, so this file skips.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { detectNginx } from "../../src/edge/nginx/detect.js";

/**
 * proxying (round robin, streamed bodies, WebSocket, retries), routes and their changes, statistics, the upstream
 * half, and the Node edge's own HTTPS listener (fallback certificate, SNI, settings), which nginx replaces
 */
const FILES = [
  "test/edge/proxy.test.ts",
  "test/edge/routes.test.ts",
  "test/edge/stats.test.ts",
  "test/edge/upstream.test.ts",
  "test/certificates/fallback.test.ts",
];

const install = detectNginx(process.env);
const missing = "missing" in install ? install.missing : null;

for (const file of FILES)
  test(`${file} on the Node edge alone`, { skip: missing ?? false }, async () => {
    const child = spawn(process.execPath, ["--import", "tsx", "--test", "--test-reporter=tap", file], {
      // NODE_TEST_CONTEXT would make the child a reporter of this run, which runs no file of its own
      env: { ...process.env, NODE_TEST_CONTEXT: undefined, EDGE_DATA_PLANE: "node" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (c: Buffer) => (out += c.toString()));
    child.stderr.on("data", (c: Buffer) => (out += c.toString()));
    const code = await new Promise<number>((resolve) => child.on("exit", (c) => resolve(c ?? 1)));
    const failed = out
      .split("\n")
      .filter((l) => /^\s*not ok /.test(l))
      .join("\n");
    assert.equal(code, 0, `${file} with EDGE_DATA_PLANE=node:\n${failed}\n${out.slice(-3000)}`);
    assert.match(out, /^# pass [1-9]/m, `${file} ran no test:\n${out.slice(-3000)}`);
  });
