import { isRunning } from "../../../pgserver/cluster.js";
import {
  DB_SIZES,
  ProviderError,
  type BackupInfo,
  type BackupVerification,
  type BranchRequest,
  type BranchResult,
  type DatabaseProvider,
  type DbSize,
  type Endpoint,
  type ExtensionOptions,
  type InstanceSpec,
  type InstanceStatus,
  type PoolStatus,
  type RecoveryRequest,
  type RecoveryResult,
  type ServerSample,
  type StandbyStatus,
  type StorageState,
  type WalContinuity,
} from "../types.js";
import { walBackups } from "./archive.js";
import { findBackup, listStoredBackups, takeBackup, verifyStoredBackup } from "./backup.js";
import { type InstanceContext } from "./context.js";
import { endSessionsBefore, rotatePassword } from "./credentials.js";
import { DEFAULT_EXTENSIONS, checkExtensions, installExtensions, shareDir } from "./extensions.js";
import { normalizeCidrs } from "./hba.js";
import { ProviderHost, type LocalProviderOptions } from "./host.js";
import { instanceStatus, provision, purge, remove, reserve, start, stopAll } from "./lifecycle.js";
import { requirePgbouncer } from "./pool.js";
import { disablePool, enablePool, poolStatusOf } from "./pooling.js";
import { applySize, enforceStorage, setAllowlist } from "./reconfigure.js";
import { sampleServer } from "./metrics.js";
import { recoverTo } from "./recovery.js";
import { branchInstance } from "./branch.js";
import { continuity, pruneBackups } from "./retention.js";
import { SIZE_PROFILES } from "./settings.js";
import { clientSessions } from "./sessions.js";
import { WakeFronts } from "./wake-front.js";
import type { WakeCapable, WakeHandler } from "../wake.js";
import { disableStandby, enableStandby, rebuildStandby, standbyStatus, switchover } from "./standby.js";

export type { LocalProviderOptions } from "./host.js";

/**
 * Runs each customer database as its own PostgreSQL server on this host. Operations on one instance
 * are serialised here; the work itself lives in the modules named after each section.
 */
export class LocalDatabaseProvider implements DatabaseProvider, WakeCapable {
  readonly kind = "local";
  private readonly host: ProviderHost;
  /** ports of idle-stopped instances this process listens on, to start them on the next connection (wake-front.ts) */
  readonly fronts: WakeFronts;

  constructor(opts: LocalProviderOptions) {
    this.host = new ProviderHost(opts);
    this.fronts = new WakeFronts((id) => this.host.load(id));
  }

  /** Resolves once this process's background work (warm-pool initdb) is over. */
  async idle(): Promise<void> {
    await this.host.spares.idle();
  }

  /** Loads the instance and runs fn on it, after every earlier operation on the same instance. */
  private withInstance<T>(id: string, fn: (ctx: InstanceContext) => Promise<T>): Promise<T> {
    return this.host.serial(id, async () => fn(await this.host.load(id)));
  }

  // ---------------------------------------------------------------- scale-to-zero (sessions.ts, wake-front.ts)

  async clientSessions(id: string): Promise<number> {
    return this.withInstance(id, clientSessions);
  }

  /** Listens in the stopped server's place; never while its server runs (its port is taken then). */
  async holdForWake(id: string): Promise<boolean> {
    return this.withInstance(id, async (ctx) => !(await isRunning(ctx.primary)) && this.fronts.hold(ctx));
  }

  releaseWakeFront(id: string): Promise<void> {
    return this.fronts.release(id);
  }

  heldWakeFronts(): string[] {
    return this.fronts.held();
  }

  setWakeHandler(handler: WakeHandler | null): void {
    this.fronts.setHandler(handler);
  }

  // ---------------------------------------------------------------- lifecycle (lifecycle.ts)

  reserve(spec: InstanceSpec): Promise<Endpoint> {
    return reserve(this.host, spec);
  }

  provision(spec: InstanceSpec): Promise<Endpoint> {
    return provision(this.host, spec);
  }

  async endpoint(id: string): Promise<Endpoint> {
    return (await this.host.load(id)).endpoint();
  }

  async start(id: string): Promise<void> {
    await this.fronts.release(id); // the server takes its ports back from a wake front of this process
    await this.withInstance(id, start);
  }

  async stop(id: string): Promise<void> {
    await this.withInstance(id, stopAll);
  }

  async remove(id: string): Promise<void> {
    await this.fronts.release(id);
    await this.withInstance(id, remove);
  }

  async purge(id: string): Promise<void> {
    await this.fronts.release(id);
    this.host.layout(id);
    await this.host.serial(id, () => purge(this.host, id));
  }

  async status(id: string): Promise<InstanceStatus> {
    return instanceStatus(await this.host.load(id));
  }

  // ---------------------------------------------------------------- credentials (credentials.ts)

  async rotatePassword(
    id: string,
    role: "owner" | "superuser",
    newPassword: string,
    opts: { keepFrom?: string[] } = {},
  ): Promise<{ changedAt: Date }> {
    if (!newPassword || newPassword.length < 8)
      throw new ProviderError("bad_spec", "passwords must have at least 8 characters");
    const keepFrom = normalizeCidrs(opts.keepFrom ?? []);
    return this.withInstance(id, (ctx) => rotatePassword(ctx, role, newPassword, keepFrom));
  }

  async endSessionsBefore(id: string, role: "owner" | "superuser", startedBefore: Date): Promise<number> {
    return this.withInstance(id, (ctx) => endSessionsBefore(ctx, role, startedBefore));
  }

  // ---------------------------------------------------------------- size, storage, access (reconfigure.ts)

  async applySize(id: string, size: DbSize): Promise<void> {
    if (!DB_SIZES.includes(size)) throw new ProviderError("bad_spec", `unknown size ${size}`);
    await this.withInstance(id, (ctx) => applySize(ctx, size));
  }

  async setStorageQuota(id: string, storageGb: number): Promise<StorageState> {
    if (!(storageGb > 0)) throw new ProviderError("bad_spec", "storage_gb must be positive");
    return this.withInstance(id, async (ctx) => {
      ctx.record.storageGb = storageGb;
      await ctx.save();
      return enforceStorage(ctx);
    });
  }

  async enforceStorageQuota(id: string): Promise<StorageState> {
    return this.withInstance(id, enforceStorage);
  }

  async setAllowlist(id: string, cidrs: string[]): Promise<void> {
    const list = normalizeCidrs(cidrs);
    await this.withInstance(id, (ctx) => setAllowlist(ctx, list));
  }

  // ---------------------------------------------------------------- backups (backup.ts, retention.ts)

  async snapshot(id: string, label?: string): Promise<BackupInfo> {
    return this.backup(id, "snapshot", label ?? null);
  }

  async baseBackup(id: string): Promise<BackupInfo> {
    return this.backup(id, "base", null);
  }

  private backup(id: string, kind: "base" | "snapshot", label: string | null): Promise<BackupInfo> {
    return this.withInstance(id, async (ctx) => {
      await ctx.requireRunning();
      return ctx.withPrimary((c) =>
        takeBackup(
          c,
          ctx.primary.dataDir,
          ctx.layout.baseBackups,
          ctx.layout.walArchive,
          ctx.record.walSegmentBytes,
          id,
          kind,
          label,
        ),
      );
    });
  }

  async listBackups(id: string): Promise<BackupInfo[]> {
    return listStoredBackups(this.host.layout(id).baseBackups);
  }

  async listArchivedWal(id: string): Promise<BackupInfo[]> {
    const ctx = await this.host.load(id);
    return walBackups(id, ctx.layout.walArchive, ctx.record.walSegmentBytes);
  }

  async verifyBackup(id: string, backupId: string): Promise<BackupVerification> {
    const ctx = await this.host.load(id);
    const info = await findBackup(ctx.layout.baseBackups, backupId);
    return verifyStoredBackup(info, ctx.layout.walArchive, ctx.record.walSegmentBytes);
  }

  async pruneBackups(
    id: string,
    retentionDays: number,
    now = new Date(),
  ): Promise<{ removedBackups: string[]; removedWal: number }> {
    return this.withInstance(id, (ctx) => pruneBackups(ctx, retentionDays, now));
  }

  async walContinuity(id: string): Promise<WalContinuity> {
    const ctx = await this.host.load(id);
    return continuity(ctx, await isRunning(ctx.primary));
  }

  // ---------------------------------------------------------------- recovery (recovery.ts)

  recoverTo(id: string, req: RecoveryRequest): Promise<RecoveryResult> {
    return recoverTo(this.host, id, req);
  }

  // ---------------------------------------------------------------- branches (branch.ts)

  branch(id: string, req: BranchRequest): Promise<BranchResult> {
    return branchInstance(this.host, id, req);
  }

  // ---------------------------------------------------------------- HA (standby.ts)

  async enableStandby(id: string): Promise<StandbyStatus> {
    return this.withInstance(id, (ctx) => enableStandby(ctx, () => this.host.allocate()));
  }

  async standbyStatus(id: string): Promise<StandbyStatus> {
    return standbyStatus(await this.host.load(id));
  }

  async rebuildStandby(id: string): Promise<StandbyStatus> {
    return this.withInstance(id, rebuildStandby);
  }

  async switchover(id: string): Promise<StandbyStatus> {
    return this.withInstance(id, async (ctx) => {
      await switchover(ctx);
      return standbyStatus(ctx);
    });
  }

  async disableStandby(id: string): Promise<void> {
    await this.withInstance(id, disableStandby);
  }

  // ---------------------------------------------------------------- pooling (pooling.ts)

  async enablePool(id: string): Promise<PoolStatus> {
    requirePgbouncer(this.host.env.pgbouncerPath);
    return this.withInstance(id, (ctx) => enablePool(ctx, () => this.host.allocate()));
  }

  async disablePool(id: string): Promise<void> {
    await this.withInstance(id, disablePool);
  }

  async poolStatus(id: string): Promise<PoolStatus> {
    return poolStatusOf(await this.host.load(id));
  }

  // ---------------------------------------------------------------- metrics (metrics.ts)

  /** not serialised with the instance's operations: a long backup must not hold the minute's sample */
  async sample(id: string): Promise<ServerSample | null> {
    return sampleServer(await this.host.load(id));
  }

  // ---------------------------------------------------------------- extensions (extensions.ts)

  async ensureExtensions(id: string, names: string[] = [], opts: ExtensionOptions = {}): Promise<string[]> {
    return this.withInstance(id, async (ctx) => {
      await ctx.requireRunning();
      const shared = opts.shared ?? SIZE_PROFILES[ctx.record.size].shared;
      const wanted = checkExtensions([...DEFAULT_EXTENSIONS, ...names], shared, shareDir(ctx.record.version));
      return installExtensions(ctx, wanted);
    });
  }
}
