import { fork, type ChildProcess } from "node:child_process";
import { readFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { FastifyBaseLogger } from "fastify";
import { ConfigError } from "../config/config.js";
import { down, RestartBackoff, stopChild, up, type ComponentStatus } from "../kernel/components.js";

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

/** what a forked platform process tells its parent over IPC (main.ts): started, or why it could not */
export type StartupMessage = { platform: "ready" } | { platform: "failed"; message: string; exitCode: number };

/**
 * Supervises the forked edge: restarted with back-off when it dies (RestartBackoff: 1 s doubling to 60 s), stopped
 * with SIGTERM at shutdown. The child shuts itself down when this process disappears (its IPC channel closes), so a
 * kill -9 leaves no orphan. The first start waits for the child's word: a child that cannot start (EDGE_TLS_PORT
 * taken) fails this process's start-up with the child's own message, instead of being restarted forever.
 */
export class EdgeChild {
  private child: ChildProcess | null = null;
  private stopping = false;
  private readonly backoff = new RestartBackoff();
  private timer: NodeJS.Timeout | null = null;
  private ready = false;
  private problem: string | null = "starting";

  constructor(private readonly opts: EdgeChildOptions) {}

  /** for readiness: up while a started child serves; down while it starts, is in back-off or failed */
  status(): ComponentStatus {
    return this.ready ? up(`forked edge process ${this.child?.pid}`) : down(`forked edge process: ${this.problem}`);
  }

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
    const first = await this.spawn(env, true);
    if (first === null || this.stopping) return; // ready, or stopped by a shutdown before it was
    if (first.exitCode === 2) {
      // the child's own configuration error ("EDGE_TLS_PORT 8443 is in use: ..."), this process's too
      const err = new ConfigError("", "");
      err.message = `${first.message} (in the forked edge process)`;
      throw err;
    }
    throw new Error(`the forked edge process could not start: ${first.message}`);
  }

  /** resolves once the child said it is ready (null) or ended before that (why) */
  private spawn(env: NodeJS.ProcessEnv, first = false): Promise<{ message: string; exitCode: number } | null> {
    const child = fork(process.argv[1]!, [], { env, stdio: ["ignore", "inherit", "inherit", "ipc"] });
    this.child = child;
    this.backoff.started();
    this.opts.log.info({ pid: child.pid }, "edge process started");
    let failure: { message: string; exitCode: number } | null = null;
    return new Promise((resolve) => {
      child.on("message", (m: StartupMessage) => {
        if (m?.platform === "ready") {
          this.ready = true;
          this.problem = null;
          resolve(null);
        } else if (m?.platform === "failed") failure = { message: m.message, exitCode: m.exitCode };
      });
      child.once("exit", (code, signal) => {
        const started = this.ready;
        this.child = null;
        this.ready = false;
        const why = failure?.message ?? `exited (${signal ?? `code ${code}`})`;
        this.problem = why;
        if (!started) resolve(failure ?? { message: why, exitCode: code ?? 1 });
        if (this.stopping || (first && !started)) return; // a first start that failed fails start-up (start())
        const wait = this.backoff.next();
        this.problem = `${why}; restarting in ${wait / 1000} s`;
        this.opts.log.error(
          { code, signal, restartInMs: wait, reason: failure?.message },
          "edge process exited; restarting",
        );
        this.timer = setTimeout(() => void this.spawn(env), wait);
      });
    });
  }

  /** SIGTERM, then the child's own drain (EDGE_DRAIN_MS) before it exits; SIGKILL if it outstays 30 s */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.timer) clearTimeout(this.timer);
    await stopChild(this.child, "SIGTERM", 30_000);
  }
}

async function platformKey(dataDir: string): Promise<string> {
  if (process.env.PLATFORM_SECRET_KEY) return process.env.PLATFORM_SECRET_KEY;
  return (await readFile(path.join(dataDir, "platform-key"), "utf8")).trim();
}
