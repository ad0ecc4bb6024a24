/** Child processes of the benchmark: the bare Fastify reference, the platform server, redis-server. */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { createServer, connect } from "node:net";
import { fileURLToPath } from "node:url";
import path from "node:path";

export const REPO_ROOT = fileURLToPath(new URL("../../", import.meta.url));
const BARE_SERVER = fileURLToPath(new URL("./bare-server.ts", import.meta.url));

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A free loopback TCP port (released just before use; the race is harmless on a quiet machine). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      const port = typeof addr === "object" && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/** A spawned child whose output is kept (last lines) for diagnostics and which can be stopped and awaited. */
export class Child {
  readonly exited: Promise<number | null>;
  private exitCode: number | null | undefined = undefined;
  private lines: string[] = [];

  constructor(
    readonly name: string,
    readonly proc: ChildProcess,
  ) {
    const keep = (chunk: Buffer) => {
      for (const line of chunk.toString("utf8").split("\n")) if (line.trim()) this.lines.push(line);
      if (this.lines.length > 200) this.lines.splice(0, this.lines.length - 200);
    };
    proc.stdout?.on("data", keep);
    proc.stderr?.on("data", keep);
    this.exited = new Promise((resolve) => {
      proc.on("exit", (code, signal) => {
        this.exitCode = code ?? (signal ? -1 : null);
        resolve(this.exitCode);
      });
    });
  }

  get running(): boolean {
    return this.exitCode === undefined;
  }

  output(last = 30): string {
    return this.lines.slice(-last).join("\n");
  }

  /** SIGTERM, wait up to timeoutMs for a clean exit, then SIGKILL. */
  async stop(timeoutMs = 30_000): Promise<number | null> {
    if (!this.running) return this.exitCode ?? null;
    this.proc.kill("SIGTERM");
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<"timeout">((resolve) => (timer = setTimeout(() => resolve("timeout"), timeoutMs)));
    try {
      if ((await Promise.race([this.exited, timeout])) === "timeout") {
        process.stderr.write(`${this.name} did not stop within ${timeoutMs / 1000}s of SIGTERM; killing it\n`);
        this.proc.kill("SIGKILL");
      }
    } finally {
      clearTimeout(timer);
    }
    return this.exited;
  }
}

/** Node with tsx's loader: compiled on load, then plain V8 speed (faster than the tsx CLI's extra process). */
function nodeWithTsx(script: string, env: NodeJS.ProcessEnv, ipc = false, nodeArgs: string[] = []): ChildProcess {
  return spawn(process.execPath, ["--import", "tsx", ...nodeArgs, script], {
    cwd: REPO_ROOT,
    env,
    stdio: ipc ? ["ignore", "pipe", "pipe", "ipc"] : ["ignore", "pipe", "pipe"],
  });
}

export async function startBare(): Promise<{ child: Child; url: string }> {
  const child = new Child("bare fastify", nodeWithTsx(BARE_SERVER, process.env, true));
  let timer: NodeJS.Timeout | undefined;
  try {
    const port = await Promise.race([
      new Promise<number>((resolve) => child.proc.once("message", (m: { port: number }) => resolve(m.port))),
      child.exited.then((code) => {
        throw new Error(`bare fastify exited (${code}) before listening:\n${child.output()}`);
      }),
      new Promise<never>(
        (_, reject) => (timer = setTimeout(() => reject(new Error("bare fastify did not start within 30 s")), 30_000)),
      ),
    ]);
    return { child, url: `http://127.0.0.1:${port}` };
  } catch (err) {
    await child.stop();
    throw err;
  } finally {
    clearTimeout(timer);
  }
}

export interface PlatformOptions {
  dataDir: string;
  rateLimitRps: number;
  redisUrl?: string;
  /** extra node flags for the server, e.g. --cpu-prof --cpu-prof-dir=/tmp/prof */
  nodeArgs?: string[];
  /** extra environment for the server, set last (e.g. a fixed EDGE_PORT) */
  env?: NodeJS.ProcessEnv;
  /** the API's port (default: a free one), when something must know the address before start */
  port?: number;
}

/**
 * `node --import tsx src/main.ts` on the embedded PostgreSQL under dataDir (initialised on first
 * start, which takes a few seconds; a later start on the same dataDir reuses it). Resolves once
 * GET /v1/edition answers 200.
 */
export async function startPlatform(opts: PlatformOptions): Promise<{ child: Child; url: string }> {
  const port = opts.port ?? (await freePort());
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: String(port),
    HOST: "127.0.0.1",
    DATA_DIR: opts.dataDir,
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL || "warn", // request logging at info would dominate the profile
    RATE_LIMIT_RPS: String(opts.rateLimitRps),
    SIGNUP: "open",
    EDGE_PORT: "0", // the edge listens beside the API; any free port
    // the registry and the S3 gateway too: another server on this machine may hold 5000 or 9000
    REGISTRY_PORT: "0",
    S3_PORT: "0",
  };
  delete env.DATABASE_URL; // always the embedded store, never a developer's database
  delete env.REDIS_URL;
  delete env.OPERATOR_TOKEN;
  delete env.FLEET_TOKEN;
  if (opts.redisUrl) env.REDIS_URL = opts.redisUrl;
  Object.assign(env, opts.env);

  const child = new Child(
    `platform server${opts.redisUrl ? " (redis)" : ""}`,
    nodeWithTsx(path.join(REPO_ROOT, "src/main.ts"), env, false, opts.nodeArgs),
  );
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    if (!child.running)
      throw new Error(`${child.name} exited (${await child.exited}) during start-up:\n${child.output()}`);
    try {
      const res = await fetch(`${url}/v1/edition`, { signal: AbortSignal.timeout(2000) });
      if (res.ok) return { child, url };
    } catch {
      // not listening yet
    }
    await sleep(250);
  }
  await child.stop();
  throw new Error(`${child.name} did not answer GET /v1/edition within 120 s:\n${child.output()}`);
}

export function redisServerInstalled(): boolean {
  const r = spawnSync("redis-server", ["--version"], { stdio: "ignore" });
  return r.status === 0;
}

/** redis-server on a free loopback port, no persistence, answering PING. */
export async function startRedis(dir: string): Promise<{ child: Child; url: string }> {
  const port = await freePort();
  const proc = spawn(
    "redis-server",
    [
      "--port",
      String(port),
      "--bind",
      "127.0.0.1",
      "--save",
      "",
      "--appendonly",
      "no",
      "--dir",
      dir,
      "--daemonize",
      "no",
    ],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  const child = new Child("redis-server", proc);
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    if (!child.running) throw new Error(`redis-server exited during start-up:\n${child.output()}`);
    if (await pingRedis(port)) return { child, url: `redis://127.0.0.1:${port}` };
    await sleep(100);
  }
  await child.stop();
  throw new Error(`redis-server did not answer PING within 15 s:\n${child.output()}`);
}

function pingRedis(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = connect(port, "127.0.0.1");
    let data = "";
    const done = (ok: boolean) => {
      sock.destroy();
      resolve(ok);
    };
    sock.setTimeout(1000, () => done(false));
    sock.on("error", () => done(false));
    sock.on("connect", () => sock.write("PING\r\n"));
    sock.on("data", (d) => {
      data += d.toString();
      if (data.includes("\r\n")) done(data.startsWith("+PONG"));
    });
  });
}
