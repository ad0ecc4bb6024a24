/**
 * README "Adding an area" holds: an area written in a temporary folder, outside src/, and listed once (the test
 * app's areas are src/areas.ts's plus it) brings its own route, error code, scope resource, job and migration, and
 * nothing central is edited. Declaring a code, a scope resource or a migration number another area has stops
 * start-up naming both.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { AREAS } from "../../src/areas.js";
import type { AreaModule } from "../../src/kernel/context.js";
import { declareAreas } from "../../src/kernel/declarations.js";
import { collectMigrations, migrate } from "../../src/store/migrate.js";
import { createPool } from "../../src/store/db.js";
import { call, createTestApp, expectError, freshDatabase, scopedKey, signup, type TestApp } from "../helpers/app.js";

const src = (file: string) => pathToFileURL(path.resolve("src", file)).href;

/** The throw-away area: notes a job writes into the table its migration makes, behind the scope `probe-notes`. */
const PROBE_MODULE = `
import { ApiError } from "${src("http/errors.js")}";
import { fileURLToPath } from "node:url";

export const probeArea = {
  name: "probe",
  tags: [{ name: "probe", description: "A throw-away area proving the area contract." }],
  errors: { probe_refused: [422, "The probe refuses this note."] },
  scopes: { "probe-notes": { instances: false } },
  migrations: fileURLToPath(new URL("./migrations/", import.meta.url)),
  jobs: (p) => [
    {
      name: "probe.write",
      handler: async (data) => {
        await p.db.query("INSERT INTO probe_notes (text) VALUES ($1)", [data.text]);
      },
    },
  ],
  routes: (app, ctx) => {
    app.get(
      "/v1/probe/notes",
      {
        config: { auth: { scope: "probe-notes:read" } },
        schema: {
          operationId: "listProbeNotes",
          tags: ["probe"],
          summary: "List the probe's notes.",
          response: {
            200: {
              type: "object",
              required: ["notes"],
              additionalProperties: false,
              properties: { notes: { type: "array", maxItems: 100, items: { type: "string", maxLength: 100 } } },
            },
          },
        },
      },
      async () => ({
        notes: (await ctx.db.query("SELECT text FROM probe_notes ORDER BY id")).rows.map((r) => r.text),
      }),
    );
    app.post(
      "/v1/probe/notes",
      {
        config: { auth: { scope: "probe-notes:write" }, errors: ["probe_refused"] },
        schema: {
          operationId: "writeProbeNote",
          tags: ["probe"],
          summary: "Queue a note; the job writes it.",
          body: {
            type: "object",
            required: ["text"],
            additionalProperties: false,
            properties: { text: { type: "string", minLength: 1, maxLength: 100 } },
          },
          response: { 202: { type: "null" } },
        },
      },
      async (request, reply) => {
        if (request.body.text === "refuse") throw new ApiError("probe_refused", "The probe refuses the note refuse.");
        await ctx.jobs.send("probe.write", { text: request.body.text });
        return reply.code(202).send(null);
      },
    );
  },
};
`;

async function until<T>(what: string, check: () => Promise<T | undefined>, ms = 20_000): Promise<T> {
  for (const end = Date.now() + ms; Date.now() < end; await new Promise((r) => setTimeout(r, 100))) {
    const value = await check();
    if (value !== undefined) return value;
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe("an area defined outside src/ and listed once", () => {
  let dir: string;
  let probe: AreaModule;
  let areas: AreaModule[];
  let database: Awaited<ReturnType<typeof freshDatabase>>;
  let t: TestApp;
  let owner: string;

  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "probe-area-"));
    await mkdir(path.join(dir, "migrations"));
    await writeFile(path.join(dir, "module.mts"), PROBE_MODULE);
    await writeFile(
      path.join(dir, "migrations", "900_probe_notes.sql"),
      "CREATE TABLE probe_notes (id bigserial PRIMARY KEY, text text NOT NULL);\n",
    );
    probe = (await import(pathToFileURL(path.join(dir, "module.mts")).href)).probeArea;
    areas = [...AREAS, probe];
    database = await freshDatabase();
  });
  after(async () => {
    await t?.close();
    await database.drop();
    await rm(dir, { recursive: true, force: true });
  });

  test("its migration runs once, after everything the template already applied", async () => {
    const db = createPool(database.url, 1);
    try {
      assert.deepEqual(await migrate(db, areas), ["900_probe_notes.sql"], "only the new area's file");
      assert.deepEqual(await migrate(db, areas), [], "nothing runs twice");
    } finally {
      await db.end();
    }
    t = await createTestApp({ databaseUrl: database.url, areas, startJobs: true });
    owner = (await signup(t.app)).token;
  });

  test("its route answers a key with its scope, and 403 scope_insufficient to a key without", async () => {
    const withScope = await scopedKey(t.app, owner, ["probe-notes:read"]);
    const without = await scopedKey(t.app, owner, ["pods:read"]);
    const ok = await call(t.app, { url: "/v1/probe/notes", token: withScope });
    assert.equal(ok.statusCode, 200, ok.body);
    assert.deepEqual(ok.json(), { notes: [] });
    expectError(await call(t.app, { url: "/v1/probe/notes", token: without }), 403, "scope_insufficient");
    const readOnly = await call(t.app, {
      method: "POST",
      url: "/v1/probe/notes",
      token: withScope,
      body: { text: "x" },
    });
    expectError(readOnly, 403, "scope_insufficient");
  });

  test("its error code answers with its status in the one error body, and is in the catalog it renders", async () => {
    const res = await call(t.app, { method: "POST", url: "/v1/probe/notes", token: owner, body: { text: "refuse" } });
    expectError(res, 422, "probe_refused");
    assert.deepEqual(res.json(), { error: { code: "probe_refused", message: "The probe refuses the note refuse." } });
    const manual = (await call(t.app, { url: "/v1/manual" })).body.split("\n");
    assert.ok(manual.includes("422 probe_refused: The probe refuses this note."), "the manual prints it");
    const doc = (await call(t.app, { url: "/v1/openapi.json" })).json();
    assert.match(doc.info.description, /\| `probe_refused` \| 422 \| The probe refuses this note\. \|/);
    const answer = doc.paths["/v1/probe/notes"].post.responses["422"];
    // error answers are shared components: follow the reference
    const shared = answer.$ref ? doc.components.responses[answer.$ref.split("/").pop()] : answer;
    assert.ok(JSON.stringify(shared).includes("probe_refused"), "the operation lists it under 422");
  });

  test("its job runs and writes into the table its migration made", async () => {
    const res = await call(t.app, { method: "POST", url: "/v1/probe/notes", token: owner, body: { text: "hello" } });
    assert.equal(res.statusCode, 202, res.body);
    const notes = await until("the job's note", async () => {
      const body = (await call(t.app, { url: "/v1/probe/notes", token: owner })).json();
      return body.notes.length ? body.notes : undefined;
    });
    assert.deepEqual(notes, ["hello"]);
  });
});

describe("what two areas both declare stops start-up, naming both", () => {
  test("the same areas declared again (a second platform in one process) are no duplicate", () => {
    declareAreas(AREAS);
    declareAreas(AREAS);
  });

  test("an error code", () => {
    const clash = { name: "clash", errors: { bucket_not_empty: [409, "Mine too."] as const } };
    assert.throws(
      () => declareAreas([...AREAS, clash]),
      /bucket_not_empty is declared twice: by buckets and by the clash area/,
    );
    const shared = { name: "clash", errors: { not_found: [404, "Mine too."] as const } };
    assert.throws(() => declareAreas([...AREAS, shared]), /not_found is declared twice: by the shared catalog/);
  });

  test("a scope resource", () => {
    const clash = { name: "clash", scopes: { buckets: { instances: true } } };
    assert.throws(
      () => declareAreas([...AREAS, clash]),
      /scope resource buckets is declared twice: by buckets and by the clash area/,
    );
  });

  test("a migration number", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "clash-area-"));
    try {
      await writeFile(path.join(dir, "042_clash.sql"), "SELECT 1;\n");
      await assert.rejects(
        collectMigrations([...AREAS, { name: "clash", migrations: dir }]),
        /migration number 042 is used twice: 042_partner\.sql \(the partner area\) and 042_clash\.sql \(the clash area\)/,
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
