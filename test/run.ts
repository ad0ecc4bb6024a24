/**
 * `npm test`: one embedded PostgreSQL server for the whole run, a migrated template database,
 * then node's test runner over every test file (each file clones the template into its own database).
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import path from "node:path";
import pino from "pino";
import PgBoss from "pg-boss";
import { startEmbeddedServer, ensureDatabase } from "../src/store/embedded.js";
import { createPool } from "../src/store/db.js";
import { migrate } from "../src/store/migrate.js";
import { AREAS } from "../src/areas.js";
import { buildTestImages, IMAGE_TEST_DIRS } from "./helpers/images.js";
import { longestFirst, saveDurations } from "./helpers/file-order.js";

export const TEMPLATE_DB = "platform_template";

function findTests(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return findTests(full);
    return name.endsWith(".test.ts") ? [full] : [];
  });
}

// a server of its own per run, so parallel runs (CI, several developers) never share or stop each other's
const dataDir = path.resolve(process.env.TEST_DATA_DIR ?? `.test-data/run-${process.pid}`);
// three files at a time (TEST_CONCURRENCY): most of a file's time is waiting on podman, PostgreSQL and timers, and a
// run on a machine loaded to 10-18 by other work failed only on two real defects; some files start several platforms,
// pools, job queues and listeners: on a loaded machine
// connections close late, and 200 was seen exhausted ("sorry, too many clients already")
// without fsync: each file's database is cloned from the template and dropped, and a run's data never outlives it
// (a killed PostgreSQL process still loses nothing; only an OS crash could, and the run would be lost anyway)
const server = await startEmbeddedServer(dataDir, TEMPLATE_DB, { maxConnections: 500, fsync: false });
const pool = createPool(server.url, 2);
await migrate(pool, AREAS);
// the job queue's schema goes into the template too, so each test database starts complete
const boss = new PgBoss({ connectionString: server.url, schema: "pgboss" });
boss.on("error", () => {});
await boss.start();
await boss.stop({ graceful: false, wait: true });
await pool.end();
await ensureDatabase(server.adminUrl("postgres"), "postgres");
pino().info("test database server ready");

const filter = process.argv.slice(2);
// longest first (test/file-seconds.tsv): with a few files at a time, the run ends soon after its longest file does
const files = longestFirst(findTests("test").filter((f) => !filter.length || filter.some((x) => f.includes(x))));
// the console's end-to-end tests drive the built page: build it once per run, from the current source
if (files.some((f) => f.startsWith(path.join("test", "console")))) {
  const built = spawnSync("npm", ["run", "-s", "console:build"], { stdio: "inherit" });
  if (built.status !== 0) {
    await server.stop();
    process.exit(built.status ?? 1);
  }
}
// container tests share images built once per run (test/helpers/images.ts), named through the environment
if (files.some((f) => IMAGE_TEST_DIRS.some((d) => f.startsWith(path.join("test", d) + path.sep))))
  Object.assign(process.env, await buildTestImages().catch((err) => (console.error(`no test images: ${err}`), {})));
// --test-force-exit: a file whose tests all finished exits even if a handle leaked (a CI run once hung on one);
// the leak itself is a defect to find, but it must not hold the whole run until the CI limit
const timings = path.join(dataDir, "file-timings.tsv");
const child = spawn(
  process.execPath,
  [
    "--import",
    "tsx",
    "--test",
    "--test-force-exit",
    "--test-reporter=tap",
    "--test-reporter-destination=stdout",
    "--test-reporter=./test/helpers/slowest-files.mjs",
    "--test-reporter-destination=stderr",
    `--test-concurrency=${process.env.TEST_CONCURRENCY ?? 3}`,
    ...files,
  ],
  {
    stdio: "inherit",
    env: {
      ...process.env,
      TEST_ADMIN_URL: server.adminUrl("postgres"),
      TEST_TEMPLATE_DB: TEMPLATE_DB,
      TEST_TIMINGS_FILE: timings,
    },
  },
);
// a run stopped by a signal still stops its server
for (const sig of ["SIGINT", "SIGTERM"] as const) process.on(sig, () => child.kill(sig));
const code: number = await new Promise((resolve) => child.on("exit", (c, signal) => resolve(c ?? (signal ? 1 : 0))));
await server.stop();
printSlowest(timings);
if (process.env.TEST_SAVE_DURATIONS) saveDurations(timings);
if (!process.env.TEST_DATA_DIR) rmSync(dataDir, { recursive: true, force: true });
process.exit(code);

/** The ten slowest test files, so a CI log shows where the run's time went. */
function printSlowest(file: string): void {
  if (!existsSync(file)) return;
  const rows = readFileSync(file, "utf8")
    .trim()
    .split("\n")
    .map((line) => line.split("\t"))
    .sort((a, b) => Number(b[0]) - Number(a[0]))
    .slice(0, 10);
  console.log("# slowest test files (seconds, start-up included)");
  for (const [ms, name] of rows)
    console.log(`#   ${(Number(ms) / 1000).toFixed(1).padStart(6)}  ${path.relative(".", name)}`);
}
