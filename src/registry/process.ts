import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import path from "node:path";
import { randomBytes } from "node:crypto";
import type { FastifyBaseLogger } from "fastify";
import { certificatePem } from "./x509.js";
import { TOKEN_ISSUER, TOKEN_SERVICE } from "./token.js";
import { bindError, RestartBackoff } from "../kernel/components.js";
import { freePort } from "../kernel/free-port.js";

/**
 * The registry server: Debian's `docker-registry` (CNCF distribution 2.8) as a child process on
 * loopback, filesystem storage under DATA_DIR/registry/storage, token authentication by the platform.
 * A crash restarts it with back-off (1 s doubling to 60 s); REGISTRY_PORT taken by another program is a start-up
 * error naming the variable; a registry left behind by a platform killed with -9 is found by
 * its pid file and stopped before a new one takes the port.
 */

export interface RegistryProcessOptions {
  bin: string;
  dataDir: string;
  /** 0: a free port chosen at start (kept across restarts of this process) */
  port: number;
  log: FastifyBaseLogger;
}

export interface StartOptions {
  /** where clients get tokens: `auth.token.realm` */
  realm: string;
  /** base64 DER of the certificate tokens are signed under */
  certificate: string;
}

const READY_TIMEOUT_MS = 15_000;

export class RegistryProcess {
  private child: ChildProcess | null = null;
  private stopping = false;
  private port: number;
  private readonly backoff = new RestartBackoff();
  private restartTimer: NodeJS.Timeout | null = null;
  private stderrTail: string[] = [];
  private opts: StartOptions | null = null;

  constructor(private readonly o: RegistryProcessOptions) {
    this.port = o.port;
  }

  /** `127.0.0.1:<port>` while running */
  get address(): string | null {
    return this.child ? `127.0.0.1:${this.port}` : null;
  }

  private get dir(): string {
    return path.join(this.o.dataDir, "registry");
  }
  private get pidFile(): string {
    return path.join(this.dir, "registry.pid");
  }

  async start(opts: StartOptions): Promise<string> {
    this.opts = opts;
    this.stopping = false;
    await mkdir(path.join(this.dir, "storage"), { recursive: true });
    await this.stopLeftover();
    if (this.port === 0) this.port = await freePort();
    // another program on the port would answer our readiness probe itself: it is found before the child starts
    else await probePort(this.port).catch((err) => Promise.reject(bindError("REGISTRY_PORT", this.port, err)));
    const configFile = path.join(this.dir, "config.yml");
    const bundle = path.join(this.dir, "token-ca.pem");
    await writeFile(bundle, certificatePem(opts.certificate));
    // JSON is YAML: the registry reads this as its configuration file
    const config = {
      version: "0.1",
      log: { level: "warn", accesslog: { disabled: true }, formatter: "text" },
      storage: {
        filesystem: { rootdirectory: path.join(this.dir, "storage") },
        delete: { enabled: true },
        maintenance: { uploadpurging: { enabled: true, age: "24h", interval: "1h", dryrun: false } },
      },
      http: { addr: `127.0.0.1:${this.port}`, secret: randomBytes(24).toString("base64url") },
      auth: {
        token: { realm: opts.realm, service: TOKEN_SERVICE, issuer: TOKEN_ISSUER, rootcertbundle: bundle },
      },
    };
    await writeFile(configFile, JSON.stringify(config, null, 2), { mode: 0o600 });
    await this.spawnAndWait(configFile);
    return this.address!;
  }

  private async spawnAndWait(configFile: string): Promise<void> {
    this.stderrTail = [];
    // a clean environment: distribution reads REGISTRY_* variables as configuration overrides
    const child = spawn(this.o.bin, ["serve", configFile], {
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
      stdio: ["ignore", "ignore", "pipe"],
    });
    this.child = child;
    child.stderr!.setEncoding("utf8");
    child.stderr!.on("data", (chunk: string) => {
      this.stderrTail.push(...chunk.split("\n").filter(Boolean));
      this.stderrTail.splice(0, Math.max(0, this.stderrTail.length - 20));
    });
    let exited = false;
    let ready = false;
    const onExit = (code: number | null, signal: string | null) => {
      exited = true;
      if (this.child === child) this.child = null;
      void rm(this.pidFile, { force: true });
      // a child that never became ready is reported by the start that spawned it
      if (this.stopping || !ready) return;
      this.o.log.error({ code, signal, stderr: this.stderrTail.slice(-5) }, "registry exited; restarting");
      this.scheduleRestart(configFile);
    };
    child.on("exit", onExit);
    child.on("error", (err) => this.o.log.error({ err }, "registry failed to start"));
    if (child.pid) await writeFile(this.pidFile, String(child.pid));
    const deadline = Date.now() + READY_TIMEOUT_MS;
    const failed = () => new Error(`docker-registry exited at start: ${this.stderrTail.slice(-3).join(" | ")}`);
    while (Date.now() < deadline) {
      if (exited) throw failed();
      if (await answers(this.port)) {
        // a child that could not bind exits at once: still alive a moment later, the answer was its own
        await sleep(200);
        if (exited) throw failed();
        ready = true;
        this.backoff.started();
        return;
      }
      await sleep(100);
    }
    await terminate(child.pid!, () => exited);
    throw new Error(`docker-registry did not answer on 127.0.0.1:${this.port} within ${READY_TIMEOUT_MS} ms`);
  }

  private scheduleRestart(configFile: string): void {
    const delay = this.backoff.next();
    this.restartTimer = setTimeout(() => {
      this.restartTimer = null;
      if (this.stopping || !this.opts) return;
      this.spawnAndWait(configFile).catch((err) => {
        this.o.log.error({ err }, "registry restart failed; trying again");
        if (!this.stopping) this.scheduleRestart(configFile);
      });
    }, delay);
    this.restartTimer.unref();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    const child = this.child;
    if (!child) return;
    await terminate(child.pid!, () => child.exitCode !== null || child.signalCode !== null);
    this.child = null;
    await rm(this.pidFile, { force: true });
  }

  /** A registry a killed platform left running (its pid file names it): stopped, so the port is free. */
  private async stopLeftover(): Promise<void> {
    if (!existsSync(this.pidFile)) return;
    const pid = Number((await readFile(this.pidFile, "utf8")).trim());
    const cmdline = await readFile(`/proc/${pid}/cmdline`, "utf8").catch(() => "");
    if (pid > 0 && cmdline.includes(path.join(this.dir, "config.yml"))) {
      this.o.log.warn({ pid }, "stopping a registry left by a previous run");
      await terminate(pid, () => !existsSync(`/proc/${pid}`));
    }
    await rm(this.pidFile, { force: true });
  }
}

async function terminate(pid: number, gone: () => boolean): Promise<void> {
  const signal = (s: NodeJS.Signals) => {
    try {
      process.kill(pid, s);
    } catch {
      // already gone
    }
  };
  signal("SIGTERM");
  for (let i = 0; i < 50 && !gone(); i++) await sleep(100);
  if (!gone()) signal("SIGKILL");
  for (let i = 0; i < 20 && !gone(); i++) await sleep(50);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The registry is up once /v2/ answers (401 with token auth). */
async function answers(port: number): Promise<boolean> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}/v2/`, { signal: AbortSignal.timeout(1000) });
    await res.arrayBuffer();
    return res.status === 401 || res.status === 200;
  } catch {
    return false;
  }
}

/** binds the port a moment and lets it go: rejects with EADDRINUSE when another program holds it */
function probePort(port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(port, "127.0.0.1", () => srv.close(() => resolve()));
  });
}

/** null when the binary can run here; otherwise what is missing and how to install it. */
export function binaryMissing(bin: string): string | null {
  if (existsSync(bin)) return null;
  return `The image registry is not installed on this host (${bin} not found); install with: apt-get install docker-registry`;
}
