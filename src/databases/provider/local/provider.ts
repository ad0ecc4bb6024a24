import { existsSync, statSync } from "node:fs";
import { chmod, mkdir, readdir, rename, rm, statfs } from "node:fs/promises";
import net from "node:net";
import path from "node:path";
import type pg from "pg";
import { pgBinaries } from "../../../pgserver/binaries.js";
import { PLATFORM_CONF, initCluster, isRunning, ownedDir, portInUse, startCluster, stopCluster } from "../../../pgserver/cluster.js";
import { postgresRunAs, type RunAs } from "../../../pgserver/system-user.js";
import {
  DB_SIZES, ProviderError,
  type BackupInfo, type BackupVerification, type DatabaseProvider, type DbSize, type Endpoint, type ExtensionOptions,
  type InstanceSpec, type InstanceStatus, type PoolStatus, type RecoveryRequest, type RecoveryResult,
  type StandbyStatus, type StorageState, type WalContinuity,
} from "../types.js";
import { ident, literal, withAdmin } from "./admin.js";
import { checkContinuity, dropSegmentsBefore, readySegments, walBackups } from "./archive.js";
import { directorySize, findBackup, listStoredBackups, removePartials, takeBackup, verifyStoredBackup } from "./backup.js";
import { InstanceContext } from "./context.js";
import { sleep } from "./exec.js";
import { DEFAULT_EXTENSIONS, checkExtensions } from "./extensions.js";
import { normalizeCidrs, renderPoolHba } from "./hba.js";
import { InstanceLayout, type NodeName } from "./layout.js";
import { chooseBackup, recoverInto, TargetBeyondWal } from "./pitr.js";
import { findPgbouncer, poolPid, reloadPool, renderUserlist, requirePgbouncer, startPool, stopPool, writePoolFiles, type PoolConfig } from "./pool.js";
import {
  ADMIN_ROLE, CUSTOMER_SUPERUSER, POOL_ADMIN_ROLE, REPLICATION_ROLE, generatePassword, readRecord, readSecrets, saveRecord, saveSecrets,
  type InstanceRecord,
} from "./record.js";
import { scramVerifier } from "./scram.js";
import { SIZE_PROFILES } from "./settings.js";
import { SparePool } from "./spares.js";
import { buildStandby, disableStandby, standbyStatus, switchover, waitStreaming } from "./standby.js";
import { ensureCertificate, isValidHostname } from "./tls.js";
import { parseLsn, segmentOf } from "./wal.js";

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

const ID_RE = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
const NAME_RE = /^[a-z_][a-z0-9_]{0,62}$/;
const RESERVED_ROLES = new Set([ADMIN_ROLE, REPLICATION_ROLE, POOL_ADMIN_ROLE, CUSTOMER_SUPERUSER, "public", "pgbouncer"]);
const GiB = 1024 ** 3;

/**
 * The customer's "superuser" is deliberately not a PostgreSQL superuser: every instance on a host runs
 * as the same OS user, so a true superuser (COPY … FROM PROGRAM, pg_read_file, ALTER SYSTEM) could read
 * or stop other tenants' servers. It gets everything short of that: roles, databases, all data,
 * monitoring, and it can act as the owner. Only the platform's own role is a real superuser.
 */
const CUSTOMER_SUPERUSER_ATTRS = "LOGIN NOSUPERUSER CREATEDB CREATEROLE BYPASSRLS";
const CUSTOMER_SUPERUSER_GRANTS = ["pg_read_all_data", "pg_write_all_data", "pg_monitor", "pg_signal_backend", "pg_read_all_settings", "pg_checkpoint"];

/** Runs each customer database as its own PostgreSQL server on this host. */
export class LocalDatabaseProvider implements DatabaseProvider {
  readonly kind = "local";
  private readonly root: string;
  private readonly runAs: RunAs | null;
  private readonly alwaysAllowed: string[];
  private readonly portRange: [number, number];
  private readonly chains = new Map<string, Promise<unknown>>();
  private readonly spares: SparePool;

  constructor(private readonly opts: LocalProviderOptions) {
    if (!path.isAbsolute(opts.dataDir) || /[\s'"\\%]/.test(opts.dataDir)) {
      // paths end up inside archive_command/restore_command shell strings
      throw new Error(`dataDir must be an absolute path without spaces, quotes or %: ${opts.dataDir}`);
    }
    this.root = opts.dataDir;
    this.runAs = postgresRunAs();
    this.alwaysAllowed = normalizeCidrs(opts.alwaysAllowedCidrs ?? []);
    this.portRange = opts.portRange ?? [20000, 29999];
    this.spares = new SparePool(this.root, this.runAs, opts.spareClusters ?? 1);
  }

  /** Resolves once this process's background work (warm-pool initdb) is over. */
  async idle(): Promise<void> {
    await this.spares.idle();
  }

  // ---------------------------------------------------------------- plumbing

  /** Operations on one instance run one at a time in this process (the job queue serialises across processes). */
  private serial<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.chains.get(key) ?? Promise.resolve();
    const next = prev.catch(() => {}).then(fn);
    this.chains.set(key, next);
    next.finally(() => { if (this.chains.get(key) === next) this.chains.delete(key); }).catch(() => {});
    return next;
  }

  private layout(id: string): InstanceLayout {
    if (!ID_RE.test(id)) throw new ProviderError("bad_spec", `invalid instance id: ${id}`);
    return new InstanceLayout(this.root, id);
  }

  private async load(id: string): Promise<InstanceContext> {
    const layout = this.layout(id);
    const record = await readRecord(layout);
    if (!record) throw new ProviderError("not_found", `no database instance ${id} on this host`);
    return new InstanceContext(layout, record, await readSecrets(layout), { runAs: this.runAs, alwaysAllowed: this.alwaysAllowed });
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

  /** A port no instance has claimed and nothing listens on. Callers hold the "alloc" lock. */
  private async allocatePort(): Promise<number> {
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

  private allocate(): Promise<number> {
    return this.serial("\0alloc", () => this.allocatePort());
  }

  private async checkCapacity(): Promise<void> {
    const max = this.opts.maxInstances ?? Infinity;
    const active = (await this.allRecords()).filter((r) => !r.removed).length;
    if (active >= max) throw new ProviderError("capacity", `this host already runs its limit of ${max} database instances`);
    await mkdir(this.root, { recursive: true });
    const fs = await statfs(this.root);
    const free = fs.bavail * fs.bsize;
    const need = this.opts.minFreeDiskBytes ?? GiB;
    if (free < need) throw new ProviderError("capacity", `not enough free disk for a new database (${Math.floor(free / 2 ** 20)} MiB free, ${Math.floor(need / 2 ** 20)} MiB needed)`);
  }

  /** Directories every instance needs, with the owners and modes the servers expect. */
  private async prepareDirs(ctx: InstanceContext): Promise<void> {
    const L = ctx.layout;
    for (const dir of [path.join(this.root, "instances"), path.join(this.root, "backups"), L.instanceDir, L.nodesDir, L.backupRoot]) {
      await mkdir(dir, { recursive: true });
      await chmod(dir, 0o711); // traversable by the server user, not listable
    }
    assertTraversable(L.nodesDir, this.runAs);
    await ownedDir(path.dirname(L.logFile("a")), this.runAs);
    await ownedDir(L.socketDir, this.runAs);
    await ownedDir(L.walArchive, this.runAs);
    await mkdir(L.baseBackups, { recursive: true, mode: 0o700 });
    await ensureCertificate(L.tlsDir, ctx.record.hostnames[0] ?? "localhost", ctx.record.hostnames, this.runAs);
  }

  private async startNode(ctx: InstanceContext, node: NodeName): Promise<void> {
    const cluster = ctx.cluster(node);
    if (await isRunning(cluster)) return;
    const port = ctx.nodePort(node);
    if (await portInUse(port)) throw new ProviderError("port_taken", `port ${port} of database ${ctx.record.id} is taken by another process`);
    try {
      await startCluster(cluster, 300);
    } catch (err) {
      throw new ProviderError("start_failed", (err as Error).message);
    }
  }

  /** Everything the record says should run: primary, standby, pool (and an interrupted switchover finished first). */
  private async startAll(ctx: InstanceContext): Promise<void> {
    if (ctx.record.switchover) await switchover(ctx);
    await ctx.writeNodeConfig(ctx.primaryNode);
    await this.startNode(ctx, ctx.primaryNode);
    const sb = ctx.standbyNode();
    if (sb) {
      if (existsSync(path.join(ctx.layout.nodeDir(sb), "PG_VERSION"))) {
        await ctx.writeNodeConfig(sb);
        await this.startNode(ctx, sb);
      } else {
        await buildStandby(ctx);
      }
    }
    if (ctx.record.pool) await this.startPoolFor(ctx);
  }

  private async stopAll(ctx: InstanceContext): Promise<void> {
    if (await isRunning(ctx.primary)) {
      // close the current WAL segment so the archive holds every change made before the stop
      await ctx.withPrimary((c) => c.query("SELECT pg_switch_wal()")).catch(() => {});
    }
    await stopPool(ctx.layout.poolDir);
    const sb = ctx.standbyNode();
    if (sb) await stopCluster(ctx.cluster(sb), "fast");
    await stopCluster(ctx.primary, "fast");
  }

  // ---------------------------------------------------------------- lifecycle

  async reserve(spec: InstanceSpec): Promise<Endpoint> {
    validateSpec(spec);
    const layout = this.layout(spec.id);
    return this.serial("\0alloc", async () => {
      const existing = await readRecord(layout);
      if (existing) return endpointOf(existing);
      await this.checkCapacity();
      const port = await this.allocatePort();
      await mkdir(layout.instanceDir, { recursive: true, mode: 0o711 });
      // secrets before the record: a record always has its secrets
      await saveSecrets(layout, { adminPassword: generatePassword(), replicationPassword: generatePassword() });
      const record: InstanceRecord = {
        id: spec.id, version: spec.version, size: spec.size, storageGb: spec.storageGb,
        database: spec.database, user: spec.user, superuser: CUSTOMER_SUPERUSER,
        host: "127.0.0.1", port, hostnames: spec.hostnames ?? [], allowlist: normalizeCidrs(spec.allowlist ?? []),
        primaryNode: "a", provisioned: false, removed: false, walSegmentBytes: 16 * 2 ** 20, readOnlyReason: null,
        standby: null, pool: null, switchover: null, restoredFrom: null, createdAt: new Date().toISOString(),
      };
      await saveRecord(layout, record);
      return endpointOf(record);
    });
  }

  async provision(spec: InstanceSpec): Promise<Endpoint> {
    validateSpec(spec);
    await this.reserve(spec);
    return this.serial(spec.id, async () => {
      const ctx = await this.load(spec.id);
      if (ctx.record.provisioned) {
        // a finished provision is never redone: passwords may have been rotated since
        await this.startAll(ctx);
        return ctx.endpoint();
      }
      await this.prepareDirs(ctx);
      await this.adoptSpare(ctx);
      // initCluster wipes and redoes a directory a crash left half-initialised (and keeps an adopted spare)
      await initCluster(ctx.primary, { superuser: ADMIN_ROLE, password: ctx.secrets.adminPassword });
      await ctx.writeNodeConfig(ctx.primaryNode);
      await this.startNode(ctx, ctx.primaryNode);
      await ctx.withPrimary(async (c) => {
        ctx.record.walSegmentBytes = Number((await c.query<{ s: string }>("SELECT setting AS s FROM pg_settings WHERE name = 'wal_segment_size'")).rows[0].s);
        await ensureRole(c, spec.user, "LOGIN", spec.password);
        await ensureRole(c, CUSTOMER_SUPERUSER, CUSTOMER_SUPERUSER_ATTRS, spec.superuserPassword);
        await c.query(`GRANT ${CUSTOMER_SUPERUSER_GRANTS.join(", ")}, ${ident(spec.user)} TO ${ident(CUSTOMER_SUPERUSER)}`);
        await ensureRole(c, REPLICATION_ROLE, "REPLICATION LOGIN", ctx.secrets.replicationPassword);
        const exists = await c.query("SELECT 1 FROM pg_database WHERE datname = $1", [spec.database]);
        if (!exists.rowCount) await c.query(`CREATE DATABASE ${ident(spec.database)} OWNER ${ident(spec.user)}`);
      });
      await this.installExtensions(ctx, DEFAULT_EXTENSIONS);
      ctx.record.provisioned = true;
      await ctx.save();
      return ctx.endpoint();
    });
  }

  /**
   * Takes an initialised data directory from the warm pool instead of running initdb. Each step can be
   * interrupted and redone: claim (rename into the instance), adopt its admin password into the
   * secrets, then move its data into place; a replacement spare is built in the background.
   */
  private async adoptSpare(ctx: InstanceContext): Promise<void> {
    const dataDir = ctx.primary.dataDir;
    const claimed = path.join(ctx.layout.instanceDir, "spare");
    const initialised = existsSync(path.join(dataDir, "PG_VERSION")) && existsSync(path.join(dataDir, PLATFORM_CONF));
    if (!initialised && !existsSync(claimed)) await this.spares.claim(ctx.record.version, claimed);
    this.spares.refill(ctx.record.version);
    if (existsSync(path.join(claimed, "data"))) {
      const password = await SparePool.passwordOf(claimed);
      if (ctx.secrets.adminPassword !== password) {
        ctx.secrets.adminPassword = password;
        await saveSecrets(ctx.layout, ctx.secrets);
      }
      await rm(dataDir, { recursive: true, force: true }); // whatever a crashed initdb left
      await rename(path.join(claimed, "data"), dataDir);
    }
    await rm(claimed, { recursive: true, force: true });
  }

  async endpoint(id: string): Promise<Endpoint> {
    const ctx = await this.load(id);
    return ctx.endpoint();
  }

  async start(id: string): Promise<void> {
    await this.serial(id, async () => {
      const ctx = await this.load(id);
      if (!ctx.record.provisioned) throw new ProviderError("not_provisioned", `database ${id} has not finished provisioning`);
      await this.startAll(ctx);
      if (ctx.record.removed) {
        ctx.record.removed = false;
        await ctx.save();
      }
    });
  }

  async stop(id: string): Promise<void> {
    await this.serial(id, async () => this.stopAll(await this.load(id)));
  }

  async remove(id: string): Promise<void> {
    await this.serial(id, async () => {
      const ctx = await this.load(id);
      await this.stopAll(ctx);
      ctx.record.removed = true;
      await ctx.save();
    });
  }

  async purge(id: string): Promise<void> {
    const layout = this.layout(id);
    await this.serial(id, async () => {
      const ctx = await this.load(id).catch(() => null);
      if (ctx) {
        await stopPool(layout.poolDir);
        for (const node of ["a", "b"] as const) await stopCluster(ctx.cluster(node), "immediate").catch(() => {});
      }
      await rm(layout.instanceDir, { recursive: true, force: true });
      await rm(layout.backupRoot, { recursive: true, force: true });
      await rm(layout.socketDir, { recursive: true, force: true });
    });
  }

  async status(id: string): Promise<InstanceStatus> {
    const ctx = await this.load(id);
    const rec = ctx.record;
    const running = await isRunning(ctx.primary);
    return {
      id: rec.id,
      provisioned: rec.provisioned,
      running,
      removed: rec.removed,
      version: rec.version,
      size: rec.size,
      storageGb: rec.storageGb,
      endpoint: ctx.endpoint(),
      diskUsageBytes: await directorySize(ctx.primary.dataDir),
      readOnly: rec.readOnlyReason ? { reason: rec.readOnlyReason } : null,
      walContinuity: rec.provisioned ? await this.continuity(ctx, running).catch(() => null) : null,
      standby: rec.standby ? await standbyStatus(ctx).catch(() => null) : null,
      pool: rec.pool ? await this.poolStatusOf(ctx) : null,
      pendingSwitchover: rec.switchover !== null,
    };
  }

  // ---------------------------------------------------------------- credentials, size, storage, access

  async rotatePassword(id: string, role: "owner" | "superuser", newPassword: string): Promise<void> {
    if (!newPassword || newPassword.length < 8) throw new ProviderError("bad_spec", "passwords must have at least 8 characters");
    await this.serial(id, async () => {
      const ctx = await this.load(id);
      await ctx.requireRunning();
      const name = role === "owner" ? ctx.record.user : CUSTOMER_SUPERUSER;
      const verifier = await ctx.withPrimary(async (c) => {
        const v = await setPassword(c, name, newPassword);
        await terminateSessions(c, name);
        return v;
      });
      ctx.secrets.roleVerifiers = { ...ctx.secrets.roleVerifiers, [name]: verifier };
      await saveSecrets(ctx.layout, ctx.secrets);
      const sb = ctx.standbyNode();
      if (sb && (await isRunning(ctx.cluster(sb)))) {
        await withAdmin(ctx.adminTarget(sb), (c) => terminateSessions(c, name)).catch(() => {});
      }
      if (ctx.record.pool) await this.refreshPool(ctx);
    });
  }

  async applySize(id: string, size: DbSize): Promise<void> {
    if (!DB_SIZES.includes(size)) throw new ProviderError("bad_spec", `unknown size ${size}`);
    await this.serial(id, async () => {
      const ctx = await this.load(id);
      if (SIZE_PROFILES[size].shared && ctx.record.standby) {
        throw new ProviderError("ha_enabled", `size ${size} has no standby: disable HA before resizing`);
      }
      const before = SIZE_PROFILES[ctx.record.size];
      const running = await isRunning(ctx.primary);
      if (SIZE_PROFILES[size].shared && running) {
        // shared sizes do not preload it; the extension would be left broken
        await ctx.withPrimary((c) => c.query("DROP EXTENSION IF EXISTS pg_stat_statements"), ctx.record.database);
      }
      ctx.record.size = size;
      await ctx.save();
      // a hot standby refuses to run with fewer connections than its primary: grow it first, shrink it last
      const growing = SIZE_PROFILES[size].maxConnections >= before.maxConnections;
      const sb = ctx.standbyNode();
      const order: NodeName[] = sb ? (growing ? [sb, ctx.primaryNode] : [ctx.primaryNode, sb]) : [ctx.primaryNode];
      for (const node of order) {
        await ctx.writeNodeConfig(node);
        const cluster = ctx.cluster(node);
        if (await isRunning(cluster)) {
          await stopCluster(cluster, "fast");
          await startCluster(cluster, 300);
        }
      }
      if (sb && (await isRunning(ctx.cluster(sb)))) await waitStreaming(ctx, 30_000);
      if (ctx.record.pool) await this.refreshPool(ctx);
    });
  }

  async setStorageQuota(id: string, storageGb: number): Promise<StorageState> {
    if (!(storageGb > 0)) throw new ProviderError("bad_spec", "storage_gb must be positive");
    return this.serial(id, async () => {
      const ctx = await this.load(id);
      ctx.record.storageGb = storageGb;
      await ctx.save();
      return this.enforceStorage(ctx);
    });
  }

  async enforceStorageQuota(id: string): Promise<StorageState> {
    return this.serial(id, async () => this.enforceStorage(await this.load(id)));
  }

  /**
   * Over quota → default_transaction_read_only for every session (a reload reaches open sessions at
   * their next transaction). This is a guard against runaway growth, not a security boundary: a
   * session can still SET it off, which is also how a customer deletes data to get back under quota.
   */
  private async enforceStorage(ctx: InstanceContext): Promise<StorageState> {
    const usage = await directorySize(ctx.primary.dataDir);
    const quota = Math.round(ctx.record.storageGb * GiB);
    const reason = usage > quota
      ? `storage quota exceeded: ${formatBytes(usage)} used of ${ctx.record.storageGb} GB; the database is read-only until storage_gb is raised or data is deleted`
      : null;
    if ((reason === null) !== (ctx.record.readOnlyReason === null)) {
      ctx.record.readOnlyReason = reason;
      await ctx.save();
      for (const node of [ctx.primaryNode, ctx.standbyNode()].filter((n): n is NodeName => n !== null)) {
        await ctx.writeNodeConfig(node);
        await ctx.reload(node);
      }
    } else if (reason) {
      ctx.record.readOnlyReason = reason; // keep the figure current
      await ctx.save();
    }
    return { usageBytes: usage, quotaBytes: quota, readOnly: reason ? { reason } : null };
  }

  async setAllowlist(id: string, cidrs: string[]): Promise<void> {
    const list = normalizeCidrs(cidrs);
    await this.serial(id, async () => {
      const ctx = await this.load(id);
      ctx.record.allowlist = list;
      await ctx.save();
      for (const node of [ctx.primaryNode, ctx.standbyNode()].filter((n): n is NodeName => n !== null)) {
        await ctx.writeNodeConfig(node);
        await ctx.reload(node);
      }
      if (ctx.record.pool) await this.refreshPool(ctx);
    });
  }

  // ---------------------------------------------------------------- backups

  async snapshot(id: string, label?: string): Promise<BackupInfo> {
    return this.backup(id, "snapshot", label ?? null);
  }

  async baseBackup(id: string): Promise<BackupInfo> {
    return this.backup(id, "base", null);
  }

  private backup(id: string, kind: "base" | "snapshot", label: string | null): Promise<BackupInfo> {
    return this.serial(id, async () => {
      const ctx = await this.load(id);
      await ctx.requireRunning();
      return ctx.withPrimary((c) => takeBackup(c, ctx.primary.dataDir, ctx.layout.baseBackups, ctx.layout.walArchive, ctx.record.walSegmentBytes, id, kind, label));
    });
  }

  async listBackups(id: string): Promise<BackupInfo[]> {
    return listStoredBackups(this.layout(id).baseBackups);
  }

  async listArchivedWal(id: string): Promise<BackupInfo[]> {
    const ctx = await this.load(id);
    return walBackups(id, ctx.layout.walArchive, ctx.record.walSegmentBytes);
  }

  async verifyBackup(id: string, backupId: string): Promise<BackupVerification> {
    const ctx = await this.load(id);
    const info = await findBackup(ctx.layout.baseBackups, backupId);
    return verifyStoredBackup(info, ctx.layout.walArchive, ctx.record.walSegmentBytes);
  }

  async pruneBackups(id: string, retentionDays: number, now = new Date()): Promise<{ removedBackups: string[]; removedWal: number }> {
    return this.serial(id, async () => {
      const ctx = await this.load(id);
      await removePartials(ctx.layout.baseBackups);
      const backups = await listStoredBackups(ctx.layout.baseBackups);
      const cutoff = now.getTime() - retentionDays * 86_400_000;
      const inWindow = backups.filter((b) => new Date(b.finishedAt).getTime() >= cutoff);
      // the newest backup before the window is the starting point for recovering to the window's first moments
      const anchor = backups.filter((b) => new Date(b.finishedAt).getTime() < cutoff).pop();
      const keep = new Set([...inWindow, ...(anchor ? [anchor] : [])].map((b) => b.id));
      const removedBackups: string[] = [];
      for (const b of backups) {
        if (keep.has(b.id)) continue;
        await rm(b.path, { recursive: true, force: true });
        removedBackups.push(b.id);
      }
      const kept = backups.filter((b) => keep.has(b.id));
      const removedWal = kept.length
        ? await dropSegmentsBefore(ctx.layout.walArchive, ctx.record.walSegmentBytes,
          kept.map((b) => segmentOf(parseLsn(b.startLsn), ctx.record.walSegmentBytes)).reduce((a, b) => (a < b ? a : b)))
        : 0;
      return { removedBackups, removedWal };
    });
  }

  async walContinuity(id: string): Promise<WalContinuity> {
    const ctx = await this.load(id);
    return this.continuity(ctx, await isRunning(ctx.primary));
  }

  private async continuity(ctx: InstanceContext, running: boolean): Promise<WalContinuity> {
    const backups = await listStoredBackups(ctx.layout.baseBackups);
    const seg = ctx.record.walSegmentBytes;
    let live = null;
    if (running) {
      const row = await ctx.withPrimary((c) => c.query<{ lsn: string; file: string; failed_wal: string | null; failed_at: Date | null; archived_at: Date | null }>(
        `SELECT pg_current_wal_lsn()::text AS lsn, pg_walfile_name(pg_current_wal_lsn()) AS file,
                last_failed_wal AS failed_wal, last_failed_time AS failed_at, last_archived_time AS archived_at
           FROM pg_stat_archiver`)).then((r) => r.rows[0]);
      const failing = row.failed_at && (!row.archived_at || row.failed_at > row.archived_at);
      live = {
        timeline: parseInt(row.file.slice(0, 8), 16),
        currentSegNo: segmentOf(parseLsn(row.lsn), seg),
        ready: await readySegments(ctx.primary.dataDir),
        archiverFailure: failing ? { wal: row.failed_wal ?? "", at: row.failed_at!.toISOString() } : null,
      };
    }
    return checkContinuity(ctx.layout.walArchive, seg, backups, live);
  }

  async recoverTo(id: string, req: RecoveryRequest): Promise<RecoveryResult> {
    const targetTime = req.targetTime ?? null;
    if (targetTime && targetTime.getTime() > Date.now()) throw new ProviderError("bad_spec", "the recovery target is in the future");
    const intoId = req.intoId ?? id;
    this.layout(intoId);
    return this.serial(id, async () => {
      const source = await this.load(id);
      if (await isRunning(source.primary)) await this.flushWalToArchive(source);
      const backup = chooseBackup(await listStoredBackups(source.layout.baseBackups), targetTime);
      const target = intoId === id ? await this.prepareInPlaceRestore(source) : await this.prepareRestoreTarget(source, intoId, backup, targetTime);
      const run = (t: Date | null) => recoverInto(target, backup, source.layout.walArchive, t);
      let timeline: number;
      try {
        timeline = await run(targetTime);
      } catch (err) {
        // nothing was committed after the target: the end of the archive *is* the state at that moment
        if (!(err instanceof TargetBeyondWal)) throw err;
        timeline = await run(null);
      }
      // roles come back as they were at the target time; passwords rotated since must stay rotated
      const verifiers = Object.entries(target.secrets.roleVerifiers ?? {});
      if (verifiers.length) {
        await target.withPrimary(async (c) => {
          for (const [role, verifier] of verifiers) await c.query(`ALTER ROLE ${ident(role)} WITH PASSWORD ${literal(verifier)}`);
        });
      }
      target.record.provisioned = true;
      target.record.removed = false;
      target.record.restoredFrom = { instanceId: id, backupId: backup.id, targetTime: targetTime?.toISOString() ?? null };
      await target.save();
      if (target.record.pool) await this.startPoolFor(target);
      return { instanceId: intoId, endpoint: target.endpoint(), fromBackupId: backup.id, targetTime: targetTime?.toISOString() ?? null, timeline };
    });
  }

  /** Makes sure every change up to now is in the archive: one commit (a timestamp recovery can stop at) and a segment switch. */
  private async flushWalToArchive(ctx: InstanceContext): Promise<void> {
    const walFile = await ctx.withPrimary(async (c) => {
      await c.query("BEGIN; SELECT pg_current_xact_id(); COMMIT;");
      return (await c.query<{ f: string }>("SELECT pg_walfile_name(pg_switch_wal()) AS f")).rows[0].f;
    });
    const file = path.join(ctx.layout.walArchive, walFile);
    for (let i = 0; i < 600 && !existsSync(file); i++) await sleep(100);
    if (!existsSync(file)) throw new ProviderError("recovery_failed", `WAL segment ${walFile} did not reach the archive; check archiving`);
  }

  /** A new instance sharing the source's roles (they come with the backup) on its own port and archive. */
  private async prepareRestoreTarget(source: InstanceContext, intoId: string, backup: BackupInfo, targetTime: Date | null): Promise<InstanceContext> {
    const layout = this.layout(intoId);
    const existing = await readRecord(layout);
    if (existing?.provisioned) throw new ProviderError("bad_spec", `instance ${intoId} already exists`);
    if (!existing) {
      await this.serial("\0alloc", async () => {
        await this.checkCapacity();
        const port = await this.allocatePort();
        await mkdir(layout.instanceDir, { recursive: true, mode: 0o711 });
        await saveSecrets(layout, { ...source.secrets });
        await saveRecord(layout, {
          ...source.record, id: intoId, port, primaryNode: "a", provisioned: false, removed: false,
          readOnlyReason: null, standby: null, pool: null, switchover: null,
          restoredFrom: { instanceId: source.record.id, backupId: backup.id, targetTime: targetTime?.toISOString() ?? null },
          createdAt: new Date().toISOString(),
        });
      });
    }
    const ctx = await this.load(intoId);
    await this.prepareDirs(ctx);
    return ctx;
  }

  /** In place: everything stops, the current data directory is kept aside (purge removes it), the standby goes. */
  private async prepareInPlaceRestore(ctx: InstanceContext): Promise<InstanceContext> {
    await this.stopAll(ctx);
    await disableStandby(ctx);
    const dataDir = ctx.primary.dataDir;
    if (ctx.record.provisioned && existsSync(dataDir)) {
      await rename(dataDir, path.join(ctx.layout.instanceDir, `pre-restore-${Date.now()}`));
    }
    ctx.record.provisioned = false; // until recovery completes, start() must not run a half-restored directory
    await ctx.save();
    await this.prepareDirs(ctx);
    return ctx;
  }

  // ---------------------------------------------------------------- HA

  async enableStandby(id: string): Promise<StandbyStatus> {
    return this.serial(id, async () => {
      const ctx = await this.load(id);
      if (SIZE_PROFILES[ctx.record.size].shared) throw new ProviderError("ha_not_supported", "a standby needs size basic or above");
      await ctx.requireRunning();
      if (ctx.record.standby) {
        const st = await standbyStatus(ctx);
        if (st.streaming) return st;
      } else {
        ctx.record.standby = { node: ctx.spareNode(), port: await this.allocate() };
        await ctx.save();
      }
      await buildStandby(ctx);
      return standbyStatus(ctx);
    });
  }

  async standbyStatus(id: string): Promise<StandbyStatus> {
    return standbyStatus(await this.load(id));
  }

  async rebuildStandby(id: string): Promise<StandbyStatus> {
    return this.serial(id, async () => {
      const ctx = await this.load(id);
      if (!ctx.record.standby) throw new ProviderError("ha_not_enabled", "no standby to rebuild; enable HA first");
      await ctx.requireRunning();
      await buildStandby(ctx);
      return standbyStatus(ctx);
    });
  }

  async switchover(id: string): Promise<StandbyStatus> {
    return this.serial(id, async () => {
      const ctx = await this.load(id);
      await switchover(ctx);
      return standbyStatus(ctx);
    });
  }

  async disableStandby(id: string): Promise<void> {
    await this.serial(id, async () => disableStandby(await this.load(id)));
  }

  // ---------------------------------------------------------------- pooling

  async enablePool(id: string): Promise<PoolStatus> {
    requirePgbouncer(this.opts.pgbouncerPath);
    return this.serial(id, async () => {
      const ctx = await this.load(id);
      await ctx.requireRunning();
      if (!ctx.record.pool) {
        ctx.record.pool = { port: await this.allocate() };
        await ctx.save();
      }
      await this.startPoolFor(ctx);
      return this.poolStatusOf(ctx);
    });
  }

  async disablePool(id: string): Promise<void> {
    await this.serial(id, async () => {
      const ctx = await this.load(id);
      await stopPool(ctx.layout.poolDir);
      await rm(ctx.layout.poolDir, { recursive: true, force: true });
      ctx.record.pool = null;
      await ctx.save();
    });
  }

  async poolStatus(id: string): Promise<PoolStatus> {
    return this.poolStatusOf(await this.load(id));
  }

  private async poolStatusOf(ctx: InstanceContext): Promise<PoolStatus> {
    const pool = ctx.record.pool;
    return {
      enabled: pool !== null,
      running: pool !== null && (await poolPid(ctx.layout.poolDir)) !== null,
      mode: "transaction",
      endpoint: pool ? ctx.endpoint(pool.port) : null,
      available: findPgbouncer(this.opts.pgbouncerPath) !== null,
    };
  }

  private poolConfig(ctx: InstanceContext): PoolConfig {
    const profile = SIZE_PROFILES[ctx.record.size];
    return {
      dir: ctx.layout.poolDir, listenPort: ctx.record.pool!.port,
      serverSocketDir: ctx.layout.socketDir, serverPort: ctx.record.port,
      certFile: ctx.layout.certFile, keyFile: ctx.layout.keyFile,
      poolSize: profile.poolSize, maxClients: profile.maxConnections * 10,
    };
  }

  private async writePool(ctx: InstanceContext): Promise<void> {
    if (!ctx.secrets.poolAdminPassword) {
      ctx.secrets.poolAdminPassword = generatePassword();
      await saveSecrets(ctx.layout, ctx.secrets);
    }
    const userlist = await ctx.withPrimary((c) => renderUserlist(c, ctx.secrets.poolAdminPassword!));
    await writePoolFiles(this.poolConfig(ctx), userlist, renderPoolHba(ctx.record.allowlist, this.alwaysAllowed), this.runAs);
  }

  private async startPoolFor(ctx: InstanceContext): Promise<void> {
    const bin = requirePgbouncer(this.opts.pgbouncerPath);
    await this.writePool(ctx);
    await startPool(bin, this.poolConfig(ctx), this.runAs);
  }

  /** New passwords, allowlist or size reach a running pooler by SIGHUP. */
  private async refreshPool(ctx: InstanceContext): Promise<void> {
    if (!findPgbouncer(this.opts.pgbouncerPath)) return;
    await this.writePool(ctx);
    await reloadPool(ctx.layout.poolDir, ctx.record.pool!.port, ctx.secrets.poolAdminPassword!);
  }

  // ---------------------------------------------------------------- extensions

  async ensureExtensions(id: string, names: string[] = [], opts: ExtensionOptions = {}): Promise<string[]> {
    return this.serial(id, async () => {
      const ctx = await this.load(id);
      await ctx.requireRunning();
      const shared = opts.shared ?? SIZE_PROFILES[ctx.record.size].shared;
      const wanted = checkExtensions([...DEFAULT_EXTENSIONS, ...names], shared, shareDir(ctx.record.version));
      return this.installExtensions(ctx, wanted);
    });
  }

  private async installExtensions(ctx: InstanceContext, names: string[]): Promise<string[]> {
    return ctx.withPrimary(async (c) => {
      for (const name of names) await c.query(`CREATE EXTENSION IF NOT EXISTS ${ident(name)}`);
      return (await c.query<{ extname: string }>("SELECT extname FROM pg_extension ORDER BY extname")).rows.map((r) => r.extname);
    }, ctx.record.database);
  }
}

// ------------------------------------------------------------------ helpers

function validateSpec(spec: InstanceSpec): void {
  const bad = (msg: string) => { throw new ProviderError("bad_spec", msg); };
  if (!ID_RE.test(spec.id)) bad(`invalid instance id: ${spec.id}`);
  if (spec.version !== 16 && spec.version !== 17) bad(`PostgreSQL ${spec.version} is not offered (16 or 17)`);
  if (!DB_SIZES.includes(spec.size)) bad(`unknown size ${spec.size}`);
  if (!(spec.storageGb > 0)) bad("storage_gb must be positive");
  if (!NAME_RE.test(spec.database) || spec.database.startsWith("pg_") || ["postgres", "template0", "template1", "pgbouncer"].includes(spec.database)) bad(`invalid database name: ${spec.database}`);
  if (!NAME_RE.test(spec.user) || spec.user.startsWith("pg_") || RESERVED_ROLES.has(spec.user)) bad(`invalid user name: ${spec.user}`);
  if ((spec.password ?? "").length < 8 || (spec.superuserPassword ?? "").length < 8) bad("passwords must have at least 8 characters");
  for (const h of spec.hostnames ?? []) if (!isValidHostname(h)) bad(`invalid hostname: ${h}`);
}

function endpointOf(r: InstanceRecord): Endpoint {
  return { host: r.host, port: r.port, database: r.database, user: r.user, superuser: r.superuser, sslmode: "require" };
}

function shareDir(version: number): string {
  return path.join(pgBinaries(version).binDir, "..", "share", "postgresql");
}

async function ensureRole(c: pg.Client, name: string, attrs: string, password: string): Promise<void> {
  const exists = (await c.query("SELECT 1 FROM pg_roles WHERE rolname = $1", [name])).rowCount;
  if (!exists) await c.query(`CREATE ROLE ${ident(name)} WITH ${attrs}`);
  else await c.query(`ALTER ROLE ${ident(name)} WITH ${attrs}`);
  await setPassword(c, name, password);
}

/** The server stores the verifier we computed, so the plain password never reaches its logs. */
async function setPassword(c: pg.Client, name: string, password: string): Promise<string> {
  const verifier = scramVerifier(password) ?? password;
  await c.query(`ALTER ROLE ${ident(name)} WITH PASSWORD ${literal(verifier)}`);
  return verifier;
}

async function terminateSessions(c: pg.Client, role: string): Promise<void> {
  await c.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1 AND pid <> pg_backend_pid()", [role]);
}

async function canBind(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once("error", () => resolve(false));
    srv.listen(port, "127.0.0.1", () => srv.close(() => resolve(true)));
  });
}

/** Fails early, with a fix, when the server user could not reach its data directory. */
function assertTraversable(dir: string, runAs: RunAs | null): void {
  if (!runAs) return;
  for (let d = dir; d !== path.dirname(d); d = path.dirname(d)) {
    const st = statSync(d);
    const ok = st.uid === runAs.uid ? (st.mode & 0o100) !== 0 : st.gid === runAs.gid ? (st.mode & 0o010) !== 0 : (st.mode & 0o001) !== 0;
    if (!ok) throw new Error(`the server user ${runAs.name} cannot enter ${d}; run: chmod o+x ${d}`);
  }
}

function formatBytes(n: number): string {
  return n >= GiB ? `${(n / GiB).toFixed(2)} GB` : `${(n / 2 ** 20).toFixed(1)} MB`;
}

