import { existsSync, statSync } from "node:fs";
import { chmod, mkdir, readdir, statfs } from "node:fs/promises";
import net from "node:net";
import path from "node:path";
import { mayPass, ownedDir } from "../../../pgserver/cluster.js";
import { postgresRunAs, type RunAs } from "../../../pgserver/system-user.js";
import { ProviderError } from "../types.js";
import { InstanceContext, type ProviderEnv } from "./context.js";
import { normalizeCidrs } from "./hba.js";
import { InstanceLayout } from "./layout.js";
import { readRecord, readSecrets, type InstanceRecord } from "./record.js";
import { SparePool } from "./spares.js";
import { ensureCertificate } from "./tls.js";

export interface LocalProviderOptions {
  /** Root of everything: instances/<id> and backups/<id> are created below it. */
  dataDir: string;
  /** Ports handed to servers and poolers; the default stays below Linux's ephemeral range. */
  portRange?: [number, number];
  /** Instances (not removed) this host may run; more → capacity error (503 provision_failed). */
  maxInstances?: number;
  /** Free disk space required to create an instance. */
  minFreeDiskBytes?: number;
  /** CIDRs always allowed besides each customer's allowlist (the platform's own apps). */
  alwaysAllowedCidrs?: string[];
  /** PgBouncer binary; detected on PATH and in the Debian location when absent. */
  pgbouncerPath?: string | null;
  /** Initialised data directories kept ready per PostgreSQL major (warm pool; initdb off the creation path). 0 turns it off; default 1. */
  spareClusters?: number;
}

export const ID_RE = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
export const GiB = 1024 ** 3;
/** Lock key of everything that hands out host resources (ports, capacity); no instance id can look like it. */
const ALLOC = "\0alloc";

/** What all instances on this host share: the data root, the server user, ports, capacity, the warm pool. */
export class ProviderHost {
  readonly root: string;
  readonly env: ProviderEnv;
  readonly spares: SparePool;
  private readonly portRange: [number, number];
  private readonly chains = new Map<string, Promise<unknown>>();

  constructor(readonly opts: LocalProviderOptions) {
    if (!path.isAbsolute(opts.dataDir) || /[\s'"\\%]/.test(opts.dataDir)) {
      // paths end up inside archive_command/restore_command shell strings
      throw new Error(`dataDir must be an absolute path without spaces, quotes or %: ${opts.dataDir}`);
    }
    this.root = opts.dataDir;
    this.env = {
      runAs: postgresRunAs(),
      alwaysAllowed: normalizeCidrs(opts.alwaysAllowedCidrs ?? []),
      pgbouncerPath: opts.pgbouncerPath,
    };
    this.portRange = opts.portRange ?? [20000, 29999];
    this.spares = new SparePool(this.root, this.env.runAs, opts.spareClusters ?? 1);
  }

  get runAs(): RunAs | null {
    return this.env.runAs;
  }

  /** Operations on one instance run one at a time in this process (the job queue serialises across processes). */
  serial<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.chains.get(key) ?? Promise.resolve();
    const next = prev.catch(() => {}).then(fn);
    this.chains.set(key, next);
    next
      .finally(() => {
        if (this.chains.get(key) === next) this.chains.delete(key);
      })
      .catch(() => {});
    return next;
  }

  /** Runs fn holding the allocation lock: no two instances are given the same port or the last free slot. */
  allocating<T>(fn: () => Promise<T>): Promise<T> {
    return this.serial(ALLOC, fn);
  }

  layout(id: string): InstanceLayout {
    if (!ID_RE.test(id)) throw new ProviderError("bad_spec", `invalid instance id: ${id}`);
    return new InstanceLayout(this.root, id);
  }

  async load(id: string): Promise<InstanceContext> {
    const layout = this.layout(id);
    const record = await readRecord(layout);
    if (!record) throw new ProviderError("not_found", `no database instance ${id} on this host`);
    return new InstanceContext(layout, record, await readSecrets(layout), this.env);
  }

  private async allRecords(): Promise<InstanceRecord[]> {
    const dir = path.join(this.root, "instances");
    if (!existsSync(dir)) return [];
    const out: InstanceRecord[] = [];
    for (const id of await readdir(dir)) {
      if (!ID_RE.test(id)) continue;
      const rec = await readRecord(new InstanceLayout(this.root, id)).catch(() => null);
      if (rec) out.push(rec);
    }
    return out;
  }

  /** A port no instance has claimed and nothing listens on. Callers hold the allocation lock. */
  async allocatePort(): Promise<number> {
    const used = new Set<number>();
    for (const r of await this.allRecords()) {
      used.add(r.port);
      if (r.standby) used.add(r.standby.port);
      if (r.pool) used.add(r.pool.port);
    }
    const [lo, hi] = this.portRange;
    const n = hi - lo + 1;
    const offset = Math.floor(Math.random() * n);
    for (let i = 0; i < n; i++) {
      const port = lo + ((offset + i) % n);
      if (!used.has(port) && (await canBind(port))) return port;
    }
    throw new ProviderError("capacity", `no free port left in ${lo}-${hi} for another database server`);
  }

  /** allocatePort for callers that do not hold the allocation lock. */
  allocate(): Promise<number> {
    return this.allocating(() => this.allocatePort());
  }

  /** Callers hold the allocation lock. */
  async checkCapacity(): Promise<void> {
    const max = this.opts.maxInstances ?? Infinity;
    const active = (await this.allRecords()).filter((r) => !r.removed).length;
    if (active >= max)
      throw new ProviderError("capacity", `this host already runs its limit of ${max} database instances`);
    await mkdir(this.root, { recursive: true });
    const fs = await statfs(this.root);
    const free = fs.bavail * fs.bsize;
    const need = this.opts.minFreeDiskBytes ?? GiB;
    if (free < need)
      throw new ProviderError(
        "capacity",
        `not enough free disk for a new database (${Math.floor(free / 2 ** 20)} MiB free, ${Math.floor(need / 2 ** 20)} MiB needed)`,
      );
  }

  /** Directories every instance needs, with the owners and modes the servers expect (and its certificate, unless the caller makes it). */
  async prepareDirs(ctx: InstanceContext, opts: { certificate?: boolean } = {}): Promise<void> {
    const L = ctx.layout;
    for (const dir of [
      path.join(this.root, "instances"),
      path.join(this.root, "backups"),
      L.instanceDir,
      L.nodesDir,
      L.backupRoot,
    ]) {
      await mkdir(dir, { recursive: true });
      await chmod(dir, 0o711); // traversable by the server user, not listable
    }
    assertTraversable(L.nodesDir, this.runAs);
    await ownedDir(path.dirname(L.logFile("a")), this.runAs);
    await ownedDir(L.socketDir, this.runAs);
    await ownedDir(L.walArchive, this.runAs);
    await mkdir(L.baseBackups, { recursive: true, mode: 0o700 });
    if (opts.certificate !== false)
      await ensureCertificate(L.tlsDir, ctx.record.hostnames[0] ?? "localhost", ctx.record.hostnames, this.runAs);
  }
}

async function canBind(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once("error", () => resolve(false));
    // every address, as the servers listen (settings.ts): a port taken on any one of them is taken
    srv.listen(port, () => srv.close(() => resolve(true)));
  });
}

/** Fails early, with a fix, when the server user could not reach its data directory. */
function assertTraversable(dir: string, runAs: RunAs | null): void {
  if (!runAs) return;
  for (let d = dir; d !== path.dirname(d); d = path.dirname(d)) {
    if (!mayPass(statSync(d), runAs))
      throw new Error(`the server user ${runAs.name} cannot enter ${d}; run: chmod o+x ${d}`);
  }
}
