import { fork, type ChildProcess } from "node:child_process";
import { readFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { FastifyBaseLogger } from "fastify";
import { ConfigError } from "../config/config.js";

/**
 * The edge as a process of its own (issue 11). `npm start` with no ROLES runs the API and the workers in one
 * process and forks the edge beside it: the same codebase with ROLES=edge against the same store, so visitors'
 * traffic has an event loop (and a core) of its own and an API restart never drops a visitor. EDGE_PROCESS=inline
 * keeps the edge inside the one process; an explicit ROLES is taken as the operator's layout and never split.
 */
export function edgeRunsApart(env: Record<string, string | undefined>): boolean {
  const mode = env.EDGE_PROCESS ?? "separate";
  if (mode !== "separate" && mode !== "inline")
    throw new ConfigError("EDGE_PROCESS", `must be separate or inline, got "${mode}"`);
  return mode === "separate" && !env.ROLES?.trim();
}

/** the roles of the process that forks the edge: every role but the edge */
export const ROLES_BESIDE_EDGE = "api,worker,s3";

export interface EdgeChildOptions {
  databaseUrl: string;
  dataDir: string;
  operatorToken: string;
  log: FastifyBaseLogger;
}

const RESTART_MS = [1000, 2000, 5000, 10_000];

/**
 * Supervises the forked edge: restarted with back-off when it dies, stopped with SIGTERM at shutdown. The child
 * shuts itself down when this process disappears (its IPC channel closes), so a kill -9 leaves no orphan.
 */
export class EdgeChild {
  private child: ChildProcess | null = null;
  private stopping = false;
  private restarts = 0;
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly opts: EdgeChildOptions) {}

  async start(): Promise<void> {
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      ROLES: "edge",
      EDGE_PROCESS: "inline",
      DATABASE_URL: this.opts.databaseUrl,
      // a host identity of its own (DATA_DIR/host-id), with the platform's key and operator token
      DATA_DIR: path.join(this.opts.dataDir, "edge"),
      PLATFORM_SECRET_KEY: await platformKey(this.opts.dataDir),
      OPERATOR_TOKEN: this.opts.operatorToken,
      HOST_NAME: `${process.env.HOST_NAME || os.hostname()}-edge`.slice(0, 100),
    };
    this.spawn(env);
  }

  private spawn(env: NodeJS.ProcessEnv): void {
    const started = Date.now();
    const child = fork(process.argv[1]!, [], { env, stdio: ["ignore", "inherit", "inherit", "ipc"] });
    this.child = child;
    this.opts.log.info({ pid: child.pid }, "edge process started");
    child.once("exit", (code, signal) => {
      this.child = null;
      if (this.stopping) return;
      if (Date.now() - started > 60_000) this.restarts = 0;
      const wait = RESTART_MS[Math.min(this.restarts++, RESTART_MS.length - 1)]!;
      this.opts.log.error({ code, signal, restartInMs: wait }, "edge process exited; restarting");
      this.timer = setTimeout(() => this.spawn(env), wait);
    });
  }

  /** SIGTERM, then the child's own drain (EDGE_DRAIN_MS) before it exits; SIGKILL if it outstays 30 s */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.timer) clearTimeout(this.timer);
    const child = this.child;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    child.kill("SIGTERM");
    const force = setTimeout(() => child.kill("SIGKILL"), 30_000);
    await exited;
    clearTimeout(force);
  }
}

async function platformKey(dataDir: string): Promise<string> {
  if (process.env.PLATFORM_SECRET_KEY) return process.env.PLATFORM_SECRET_KEY;
  return (await readFile(path.join(dataDir, "platform-key"), "utf8")).trim();
}
