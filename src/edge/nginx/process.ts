import { spawn, type ChildProcess } from "node:child_process";
import { chmod, mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import type { FastifyBaseLogger } from "fastify";
import { ConfigError } from "../../config/config.js";
import { RestartBackoff, stopChild } from "../../kernel/components.js";
import type { NginxInstall } from "./detect.js";

export interface NginxProcessOptions {
  install: NginxInstall;
  prefix: string;
  conf: string;
  adminPort: number;
  /** EDGE_PORT as nginx binds it, for the start-up error naming it */
  port: number;
  drainMs: number;
  log: FastifyBaseLogger;
  /** nginx (re)started: its shared dicts are empty */
  started: () => void;
}

/**
 * Runs nginx in the foreground (`daemon off`, `-p <prefix> -c <conf>`, pid and error log in the prefix) and
 * supervises it as the registry is: restarted with back-off (1 s doubling to 60 s) when it dies, stopped with
 * SIGQUIT (in-flight requests finish, EDGE_DRAIN_MS at most) at shutdown. An nginx left behind by a platform killed
 * with -9 is stopped first (its pid file), and quits by itself within seconds anyway (the next start, its pid file).
 */
export class NginxProcess {
  private child: ChildProcess | null = null;
  private stopping = false;
  /** nginx has served once: before that a failed start is start()'s error (exit 2 naming the port), not a restart */
  private served = false;
  private timer: NodeJS.Timeout | null = null;
  private readonly backoff = new RestartBackoff();
  problem: string | null = null;

  constructor(private readonly opts: NginxProcessOptions) {}

  get running(): boolean {
    return this.child !== null && this.problem === null;
  }

  async start(): Promise<void> {
    await this.stopLeftover();
    const first = await this.spawn();
    if (first !== null) {
      throw this.startError(first);
    }
  }

  /**
   * nginx's "bind() to 127.0.0.1:8443 failed (98: Address already in use)" as the start-up error naming the variable
   * to set. nginx listens on EDGE_PORT, on its loopback admin port (a free one) and, with TLS, on EDGE_TLS_PORT: any
   * other port named is the TLS listener's.
   */
  private startError(reason: string): Error {
    if (!/Address already in use/.test(reason))
      return new Error(`nginx (the edge's data plane) did not start: ${reason}`);
    const port = Number(/bind\(\) to .*:(\d+) failed/.exec(reason)?.[1] ?? this.opts.port);
    if (port === this.opts.adminPort)
      return new Error(`nginx's loopback admin port ${port} was taken meanwhile: ${reason}`);
    const name = port === this.opts.port ? "EDGE_PORT" : "EDGE_TLS_PORT";
    return new ConfigError(name, `${port} is in use: set ${name} to a free port`);
  }

  /** resolves null once nginx answers on its admin port, or the reason it ended before */
  private async spawn(): Promise<string | null> {
    const { install, prefix, conf } = this.opts;
    await mkdir(prefix, { recursive: true });
    await chmod(prefix, 0o755);
    const child = spawn(install.binary, ["-p", prefix, "-c", conf, "-e", path.join(prefix, "error.log")], {
      stdio: ["ignore", "ignore", "pipe"],
    });
    this.child = child;
    this.backoff.started();
    let stderr = "";
    child.stderr!.on("data", (c: Buffer) => {
      stderr = (stderr + c.toString()).slice(-4000);
    });
    let exited = false;
    child.once("exit", (code, signal) => {
      exited = true;
      this.child = null;
      if (this.stopping || !this.served) return;
      const wait = this.backoff.next();
      this.problem = `nginx exited (${signal ?? `code ${code}`}); restarting in ${wait / 1000} s`;
      this.opts.log.error(
        { code, signal, restartInMs: wait, stderr: stderr.slice(-500) },
        "edge nginx exited; restarting",
      );
      this.timer = setTimeout(() => void this.spawn(), wait);
    });
    const deadline = Date.now() + 15_000;
    while (!exited && Date.now() < deadline) {
      const ok = await fetch(`http://127.0.0.1:${this.opts.adminPort}/health`).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) {
        this.served = true;
        this.problem = null;
        this.opts.log.info({ pid: child.pid, version: install.version }, "edge nginx started");
        this.opts.started();
        return null;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    if (!exited) child.kill("SIGKILL");
    return (stderr.trim() || "no answer within 15 s").slice(-1000);
  }

  private async stopLeftover(): Promise<void> {
    const pid = Number((await readFile(path.join(this.opts.prefix, "nginx.pid"), "utf8").catch(() => "")).trim());
    if (!Number.isInteger(pid) || pid <= 1) return;
    const cmdline = await readFile(`/proc/${pid}/cmdline`, "utf8").catch(() => "");
    if (!cmdline.includes("nginx")) return; // a reused pid, not ours
    try {
      process.kill(pid, "SIGQUIT");
    } catch {
      return;
    }
    for (let i = 0; i < 100 && (await readFile(`/proc/${pid}/cmdline`, "utf8").catch(() => "")); i++)
      await new Promise((r) => setTimeout(r, 50));
  }

  /** graceful stop: nginx stops accepting, lets answers under way finish (worker_shutdown_timeout), then exits */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.timer) clearTimeout(this.timer);
    await stopChild(this.child, "SIGQUIT", this.opts.drainMs + 5000);
  }
}

export async function writeConf(file: string, text: string): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, text, { mode: 0o600 }); // it holds the secret the Node edge trusts
}
