import { execFile } from "node:child_process";
import { readdir, readFile, stat } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import type { ImageFiles } from "../../src/runtime/images.js";
import { buildImage, TEST_IMAGE_PREFIX } from "../helpers/images.js";

const run = promisify(execFile);

/**
 * An app image that holds a PostgreSQL connection, built offline from what this host already has: its own
 * node binary with the shared libraries `ldd` lists, node-postgres and its dependencies from the project's
 * node_modules, and the scripts below, over busybox (test/helpers/images.ts; built again only when a file changes).
 */

/**
 * The app: connects once with DATABASE_URL (TLS, the self-signed certificate not verified) and listens on 8080
 * only once that connection works, so the pod is healthy only then. GET / runs a query over the held connection
 * ("ok <n> <user>", 500 when it fails), GET /env answers the PGPASSWORD it was started with. On SIGTERM it stops
 * accepting, finishes what it serves and closes the connection.
 */
const SERVER = `
const http = require("node:http");
const pg = require("pg");
const u = new URL(process.env.DATABASE_URL);
const client = new pg.Client({
  host: u.hostname,
  port: Number(u.port),
  user: decodeURIComponent(u.username),
  password: decodeURIComponent(u.password),
  database: decodeURIComponent(u.pathname.slice(1)),
  ssl: { rejectUnauthorized: false },
  connectionTimeoutMillis: 10000,
});
client.on("error", (e) => console.error("connection lost:", e.message));
let served = 0;
const server = http.createServer(async (req, res) => {
  if (req.url === "/env") return res.end(process.env.PGPASSWORD || "");
  try {
    const r = await client.query("SELECT current_user AS u, 1 AS one");
    served++;
    res.end("ok " + served + " " + r.rows[0].u);
  } catch (e) {
    res.statusCode = 500;
    res.end("query failed: " + e.message);
  }
});
client.connect().then(
  () => server.listen(8080, () => console.log("connected to " + u.hostname + ", listening on 8080")),
  (e) => {
    console.error("cannot connect to " + u.hostname + ": " + e.message);
    process.exit(1);
  },
);
process.on("SIGTERM", () => server.close(() => client.end().finally(() => process.exit(0))));
`;

/**
 * One connection attempt, for exec: argv[2] is a URL; a host "gateway" stands for this container's default
 * gateway (the host as its network sees it). Prints "connected" or the error, exits 0 or 2.
 */
const PROBE = `
const fs = require("node:fs");
const pg = require("pg");
const u = new URL(process.argv[2]);
let host = u.hostname;
if (host === "gateway") {
  const route = fs.readFileSync("/proc/net/route", "utf8").split("\\n").slice(1).map((l) => l.trim().split(/\\s+/));
  const hex = route.find((r) => r[1] === "00000000")[2];
  host = [0, 2, 4, 6].map((i) => parseInt(hex.slice(i, i + 2), 16)).reverse().join(".");
}
const c = new pg.Client({
  host,
  port: Number(u.port),
  user: decodeURIComponent(u.username),
  password: decodeURIComponent(u.password),
  database: decodeURIComponent(u.pathname.slice(1)),
  ssl: { rejectUnauthorized: false },
  connectionTimeoutMillis: 8000,
});
c.on("error", () => {});
c.connect()
  .then(() => c.query("SELECT 1"))
  .then(
    () => (console.log("connected via " + host), c.end().then(() => process.exit(0))),
    (e) => (console.log("refused via " + host + ": " + e.message), process.exit(2)),
  );
`;

/** A package and every package it depends on, from node_modules, by name. */
async function withDependencies(nodeModules: string, name: string, seen = new Set<string>()): Promise<Set<string>> {
  if (seen.has(name)) return seen;
  seen.add(name);
  const pkg = JSON.parse(await readFile(path.join(nodeModules, name, "package.json"), "utf8"));
  for (const dep of Object.keys(pkg.dependencies ?? {})) await withDependencies(nodeModules, dep, seen);
  return seen;
}

async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...(await filesUnder(full)));
    else if (e.isFile()) out.push(full);
  }
  return out;
}

/** The node binary and its libraries at the paths the dynamic loader looks for them (test/edge/ws-echo.ts too). */
export async function nodeFiles(): Promise<ImageFiles> {
  const node = process.execPath;
  const files: ImageFiles = { "/usr/local/bin/node": { content: await readFile(node), mode: 0o755 } };
  const { stdout } = await run("ldd", [node]);
  for (const line of stdout.split("\n")) {
    // "libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x…)" or "/lib64/ld-linux-x86-64.so.2 (0x…)"
    const lib = /(?:=>\s*)?(\/\S+)\s+\(0x/.exec(line)?.[1];
    if (lib) files[lib] = { content: await readFile(lib), mode: 0o755 };
  }
  return files;
}

export const NODE_PG_IMAGE = `${TEST_IMAGE_PREFIX}/node-pg:1`;

/** Builds (or finds, by content) the image; the app is /app/server.js, the probe /app/probe.js. */
export async function buildNodePgImage(): Promise<string> {
  const nodeModules = path.resolve("node_modules");
  const files: ImageFiles = {
    ...(await nodeFiles()),
    "/app/server.js": SERVER,
    "/app/probe.js": PROBE,
  };
  for (const name of await withDependencies(nodeModules, "pg")) {
    const root = path.join(nodeModules, name);
    for (const f of await filesUnder(root)) {
      const mode = (await stat(f)).mode & 0o777;
      files[path.join("/app/node_modules", name, path.relative(root, f))] = { content: await readFile(f), mode };
    }
  }
  return buildImage(NODE_PG_IMAGE, files, ["/usr/local/bin/node", "/app/server.js"]);
}
