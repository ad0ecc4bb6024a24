import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { call, createTestApp, type TestApp } from "../helpers/app.js";

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, "../..");
const bin = (name: string) => path.join(root, "node_modules/.bin", name);

/** Runs a linter's CLI; both exit non-zero when they find errors, so the exit code is not the verdict. */
async function lint(cmd: string, args: string[]): Promise<string> {
  try {
    const { stdout } = await run(cmd, args, {
      cwd: root,
      maxBuffer: 256 * 1024 * 1024,
      timeout: 90_000,
      env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true", NO_COLOR: "1" },
    });
    return stdout;
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; killed?: boolean };
    if (e.killed || !e.stdout)
      throw new Error(`${path.basename(cmd)} failed: ${e.stderr ?? String(err)}`, { cause: err });
    return e.stdout;
  }
}

const tally = (items: { code: string }[]) => {
  const by: Record<string, number> = {};
  for (const i of items) by[i.code] = (by[i.code] ?? 0) + 1;
  return Object.entries(by)
    .sort((a, b) => b[1] - a[1])
    .map(([c, n]) => `${c}: ${n}`)
    .join(", ");
};

/** The document the server serves passes Spectral (spectral:oas + OWASP) and Redocly with no errors. */
describe("the OpenAPI document passes real linters", { timeout: 180_000 }, () => {
  let t: TestApp;
  let dir: string;
  let file: string;
  before(async () => {
    t = await createTestApp();
    dir = await mkdtemp(path.join(tmpdir(), "openapi-"));
    file = path.join(dir, "openapi.json");
    const res = await call(t.app, { url: "/v1/openapi.json" });
    assert.equal(res.statusCode, 200);
    await writeFile(file, res.body);
    // OPENAPI_OUT=path keeps a copy, e.g. for a CI artifact or to run a linter by hand
    if (process.env.OPENAPI_OUT) await writeFile(process.env.OPENAPI_OUT, res.body);
  });
  after(async () => {
    await t?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  test("the document says what the server does: the manual is text/plain, 414/431 and per-status error codes are listed", async () => {
    const doc = (await call(t.app, { url: "/v1/openapi.json" })).json();
    const manual = doc.paths["/v1/manual"].get;
    assert.deepEqual(Object.keys(manual.responses["200"].content), ["text/plain"]);
    assert.deepEqual(manual.security, [], "public operations say so");
    const getDb = doc.paths["/v1/databases/{id}"].get;
    for (const status of ["401", "404", "414", "429", "431"])
      assert.ok(getDb.responses[status], `GET /v1/databases/{id} documents ${status}`);
    // error answers are shared components (#/components/responses/...): follow the reference
    const response = (status: string) => {
      const r = getDb.responses[status];
      return r.$ref ? doc.components.responses[r.$ref.split("/").pop()] : r;
    };
    const codes = (status: string) =>
      response(status).content["application/json"].schema.properties.error.properties.code.enum;
    assert.ok(
      codes("404").includes("not_found") &&
        codes("414").includes("uri_too_long") &&
        codes("431").includes("headers_too_large"),
    );
    assert.ok(getDb.responses["200"].headers.RateLimit && response("429").headers["Retry-After"]);
    assert.ok(getDb.description, "every operation has a description");
    const tags = new Set(doc.tags.map((x: { name: string }) => x.name));
    for (const ops of Object.values(doc.paths) as Record<string, { tags: string[] }>[])
      for (const op of Object.values(ops))
        for (const tag of op.tags) assert.ok(tags.has(tag), `tag ${tag} is declared`);
  });

  test("Spectral with spectral:oas and the OWASP ruleset (.spectral.yaml) reports no errors", async () => {
    const out = await lint(bin("spectral"), [
      "lint",
      file,
      "--ruleset",
      path.join(root, ".spectral.yaml"),
      "--format",
      "json",
      "--quiet",
    ]);
    const results = JSON.parse(out.slice(out.indexOf("["))) as {
      code: string;
      severity: number;
      path: string[];
      message: string;
    }[];
    const errors = results.filter((r) => r.severity === 0);
    const warnings = results.filter((r) => r.severity === 1);
    console.log(`spectral: ${errors.length} errors, ${warnings.length} warnings`);
    if (warnings.length) console.log(`spectral warnings: ${tally(warnings)}`);
    assert.equal(
      errors.length,
      0,
      `${tally(errors)}\n${errors
        .slice(0, 10)
        .map((e) => `${e.code} ${e.path.join(".")}: ${e.message}`)
        .join("\n")}`,
    );
  });

  test("redocly lint (redocly.yaml) reports no errors", async () => {
    const out = await lint(bin("redocly"), [
      "lint",
      file,
      "--config",
      path.join(root, "redocly.yaml"),
      "--format",
      "json",
    ]);
    const report = JSON.parse(out.slice(out.indexOf("{"))) as {
      totals: { errors: number; warnings: number };
      problems: { ruleId: string; severity: string; message: string; location: { pointer: string }[] }[];
    };
    console.log(`redocly: ${report.totals.errors} errors, ${report.totals.warnings} warnings`);
    const errors = report.problems.filter((p) => p.severity === "error");
    assert.equal(
      report.totals.errors,
      0,
      errors
        .slice(0, 10)
        .map((p) => `${p.ruleId} ${p.location[0]?.pointer}: ${p.message}`)
        .join("\n"),
    );
  });
});
