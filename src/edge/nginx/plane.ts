import path from "node:path";
import type { FastifyBaseLogger } from "fastify";
import { AdminPushQueue } from "./push-queue.js";
import type { EdgeTarget } from "../../kernel/contracts.js";
import type { EdgeConfig } from "../config.js";
import type { Resolved } from "../route-cache.js";
import { nginxConf, type NginxConfExtension } from "./conf.js";
import type { NginxInstall } from "./detect.js";
import { NginxProcess, writeConf } from "./process.js";
import { zeroCounts, type CountsOf } from "../stats/counts.js";
import { freePort } from "../../kernel/free-port.js";

export interface NginxPlaneOptions {
  install: NginxInstall;
  /** the header value the Node edge's loopback listener trusts (and the admin server asks for) */
  secret: string;
  config: EdgeConfig;
  /** the edge's data directory: nginx's prefix is `<dir>/edge-nginx` */
  dataDir: string;
  /** the Node edge's loopback port */
  nodePort: number;
  log: FastifyBaseLogger;
  /** whether a target may be answered by nginx alone (public, no access policy) */
  open: (target: EdgeTarget) => boolean;
  /** the route feed hears NOTIFYs now: pushed routes are then dropped on change (else nothing is pushed) */
  live: () => boolean;
  /** further parts of the configuration (static sites: static-lua.ts) */
  extensions?: NginxConfExtension[];
  /** nginx (re)started with empty dicts: the parts behind `extensions` push again */
  restarted?: () => void;
}

/**
 * The platform's side of the nginx data plane: starts and supervises nginx, pushes the routes it may answer alone
 * (public apps with healthy replicas) as the Node edge resolves them, drops them on their source's NOTIFY, and
 * drains the statistics of nginx's own answers. The Node edge stays the control plane's resolver and answers
 * everything else behind nginx on loopback.
 */
export class NginxPlane {
  private process: NginxProcess | null = null;
  private adminPort = 0;
  private boundPort = 0;
  /** host → the channel of the source that answered it, for every host nginx holds */
  private readonly pushed = new Map<string, string | null>();
  /** "<kind>:<id>" → the newest target seen, for the owner of drained statistics */
  private readonly targets = new Map<string, EdgeTarget>();
  private readonly pushes: AdminPushQueue;
  /** bumped on every change: a resolution begun before one is not pushed (it may be stale) */
  generation = 0;

  constructor(private readonly opts: NginxPlaneOptions) {
    // nginx is down or restarting: what it holds is gone with it, nothing to correct
    this.pushes = new AdminPushQueue(
      (body) => this.admin("/routes", { method: "POST", body }),
      (lines) => {
        this.opts.log.warn({ lines }, "edge nginx did not take a route change");
        this.pushed.clear();
      },
    );
  }

  get port(): number {
    return this.boundPort;
  }

  /** null while nginx serves (`??` would turn a running process's null into "not started": readiness said down) */
  get problem(): string | null {
    return this.process ? this.process.problem : "not started";
  }

  async start(): Promise<void> {
    const { config } = this.opts;
    this.adminPort = await freePort();
    this.boundPort = config.port === 0 ? await freePort(config.host) : config.port;
    const prefix = path.join(this.opts.dataDir, "edge-nginx");
    const conf = path.join(prefix, "nginx.conf");
    await writeConf(
      conf,
      nginxConf({
        install: this.opts.install,
        prefix,
        host: config.host,
        port: this.boundPort,
        adminPort: this.adminPort,
        nodePort: this.opts.nodePort,
        secret: this.opts.secret,
        routeTtlMs: config.routeTtlMs,
        upstreamTimeoutMs: config.upstreamTimeoutMs,
        requestTimeoutMs: config.requestTimeoutMs,
        drainMs: config.drainMs,
        extensions: this.opts.extensions,
      }),
    );
    this.process = new NginxProcess({
      install: this.opts.install,
      prefix,
      conf,
      adminPort: this.adminPort,
      port: this.boundPort,
      drainMs: config.drainMs,
      log: this.opts.log,
      // a fresh nginx holds no route: they are pushed again as the Node edge resolves them
      started: () => {
        this.pushed.clear();
        this.opts.restarted?.();
      },
    });
    await this.process.start();
  }

  /** An app the Node edge answered behind nginx (nginx counted it, under "<kind>:<id>"): its owner, for the drain. */
  known(target: EdgeTarget): void {
    const key = `${target.kind}:${target.id}`;
    if (this.targets.get(key) === target) return;
    if (this.targets.size > 100_000) this.targets.clear();
    this.targets.set(key, target);
  }

  /**
   * A host resolved by the Node edge (begun at `generation`): pushed when nginx may answer it alone. `next` is the
   * replica index the Node edge's round robin gives next: nginx's rotation of a target it does not hold yet goes on
   * from there (the request that resolved it is usually answered by the Node edge, with that index).
   */
  offer(host: string, resolved: Resolved, generation: number, next: number): Promise<void> {
    if (generation !== this.generation || !this.opts.live()) return Promise.resolve();
    const t = resolved.target;
    if (t && t.upstreams.length > 0 && !t.site && !t.idle && this.opts.open(t)) {
      const key = `${t.kind}:${t.id}`;
      if (/\s/.test(key) || /\s/.test(host)) return Promise.resolve();
      if (this.targets.size > 100_000) this.targets.clear();
      this.targets.set(key, t);
      this.pushed.set(host, resolved.channel);
      if (t.upstreams.length > 1) this.send(`rr ${key} ${next + 1}`);
      this.send(`set ${host} ${key} ${t.upstreams.join(" ")}`);
    } else if (this.pushed.delete(host)) this.send(`del ${host}`);
    else return Promise.resolve();
    // the resolving request is answered once nginx holds the route: the next one is nginx's, in the same rotation
    return this.settled();
  }

  /** A source's change (null: anything may have changed): its hosts go back to the Node edge until resolved again. */
  invalidate(channel: string | null): void {
    this.generation++;
    if (channel === null) {
      this.pushed.clear();
      return this.send("flush");
    }
    for (const [host, from] of this.pushed)
      if (from === channel) {
        this.pushed.delete(host);
        this.send(`del ${host}`);
      }
  }

  private send(line: string): void {
    this.pushes.send(line);
  }

  /** resolves once every change queued so far reached nginx */
  settled(): Promise<void> {
    return this.pushes.settled();
  }

  async admin(pathname: string, init: RequestInit = {}): Promise<string | null> {
    if (!this.adminPort) return null;
    const r = await fetch(`http://127.0.0.1:${this.adminPort}${pathname}`, {
      ...init,
      headers: { "x-platform-edge": this.opts.secret },
      signal: AbortSignal.timeout(5000),
    });
    return r.ok ? r.text() : null;
  }

  /** The counts nginx gathered since the last drain, per app and minute (apps it no longer knows are skipped). */
  async drainStats(): Promise<CountsOf[]> {
    if (!this.process?.running) return [];
    const text = await this.admin("/stats").catch(() => null);
    if (!text) return [];
    const rows = new Map<string, CountsOf>();
    for (const line of text.split("\n")) {
      const m = /^(\d+)\|(\S+)\|(r|4|5|b|h\d+) (\d+)$/.exec(line);
      if (!m) continue;
      const target = this.targets.get(m[2]);
      if (!target) continue;
      const key = `${m[1]}|${m[2]}`;
      let row = rows.get(key);
      if (!row) {
        row = { target, minute: Number(m[1]), ...zeroCounts() };
        rows.set(key, row);
      }
      const n = Number(m[4]);
      const field = m[3];
      if (field === "r") row.requests += n;
      else if (field === "4") row.status4xx += n;
      else if (field === "5") row.status5xx += n;
      else if (field === "b") row.bytesOut += n;
      else {
        const bucket = Number(field.slice(1));
        if (bucket < row.latency.length) row.latency[bucket] += n;
      }
    }
    return [...rows.values()].filter((r) => r.requests > 0);
  }

  async stop(): Promise<void> {
    await this.process?.stop();
    this.process = null;
  }
}
