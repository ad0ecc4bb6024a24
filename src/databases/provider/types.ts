/**
 * The contract between the platform (routes, jobs, reconciler) and whatever really runs
 * customer PostgreSQL servers. One implementation today (local: servers on this host);
 * others (remote hosts, cloud) can follow without the platform changing.
 *
 * Every operation is addressed by the platform's instance id and is safe to retry:
 * a job killed half-way can simply run the same call again.
 */
import { ApiError, statusOf, type ErrorCode, type MapsToApiError } from "../../http/errors.js";
import type { ServerSample } from "../../metrics/contract.js";

export type DbSize = "dev" | "basic" | "pro" | "business";
export const DB_SIZES: readonly DbSize[] = ["dev", "basic", "pro", "business"];
export type PgMajor = 16 | 17;

/** What the platform asks for when an instance is created. */
export interface InstanceSpec {
  /** Platform id (UUID or slug-like); names directories, so only [A-Za-z0-9-_]. */
  id: string;
  version: PgMajor;
  size: DbSize;
  /** Quota watched by enforceStorageQuota; fractional values are allowed (tests use tiny quotas). */
  storageGb: number;
  /** Customer database and its owner role. */
  database: string;
  user: string;
  /** Used only until provisioning completes; later provision() calls never reset passwords. */
  password: string;
  /** For the customer's admin role "postgres" (broad rights, but not a PostgreSQL superuser: tenants share an OS user). */
  superuserPassword: string;
  /** Names put into the TLS certificate besides localhost/127.0.0.1 (public/internal host). */
  hostnames?: string[];
  /** Initial allowlist (CIDRs); empty or absent = all addresses. */
  allowlist?: string[];
}

/** Where and as whom to connect. Never carries a password: URLs with passwords are built by the caller. */
export interface Endpoint {
  host: string;
  port: number;
  database: string;
  user: string;
  superuser: string;
  sslmode: "require";
}

export interface InstanceStatus {
  id: string;
  /** false once provisioning has not finished (or never started). */
  provisioned: boolean;
  running: boolean;
  removed: boolean;
  version: PgMajor;
  size: DbSize;
  storageGb: number;
  endpoint: Endpoint;
  diskUsageBytes: number;
  /** Non-null when writes are refused, with a sentence a user can act on. */
  readOnly: { reason: string } | null;
  walContinuity: WalContinuity | null;
  standby: StandbyStatus | null;
  pool: PoolStatus | null;
  /** An interrupted switchover that start()/switchover() will finish. */
  pendingSwitchover: boolean;
}

export type BackupKind = "base" | "wal" | "snapshot";

export interface BackupInfo {
  id: string;
  instanceId: string;
  kind: BackupKind;
  label: string | null;
  status: "complete";
  sizeBytes: number;
  startedAt: string;
  finishedAt: string;
  /** LSN range the backup covers ("0/3000028" form). */
  startLsn: string;
  stopLsn: string;
  timeline: number;
  /** JSON manifest with a sha256 per file (null for WAL segments, which PostgreSQL checksums itself per record). */
  manifestPath: string | null;
  /** Directory (base/snapshot) or file (wal) holding the backup. */
  path: string;
}

export interface BackupVerification {
  backupId: string;
  ok: boolean;
  checkedFiles: number;
  /** Files whose sha256 or size differs from the manifest. */
  mismatched: string[];
  missing: string[];
  unexpected: string[];
  /** WAL segments between the backup's start and stop LSN absent from the archive (the backup cannot be restored without them). */
  missingWal: string[];
}

export interface WalContinuity {
  ok: boolean;
  /** Why ok is false, in words. */
  problem: string | null;
  baseBackupId: string | null;
  timeline: number | null;
  fromSegment: string | null;
  toSegment: string | null;
  checkedSegments: number;
  /** Segments that should be in the archive and are not: PITR across them is impossible. */
  missing: string[];
  /** Segments finished but still waiting for the archiver (not a gap yet). */
  pending: string[];
  archiverFailure: { wal: string; at: string } | null;
}

export interface StandbyStatus {
  enabled: boolean;
  running: boolean;
  port: number;
  streaming: boolean;
  state: string | null;
  /** Bytes of WAL the standby has not replayed yet (primary's current LSN minus standby replay LSN). */
  lagBytes: number | null;
  replayLagSeconds: number | null;
  replayLsn: string | null;
}

export interface PoolStatus {
  enabled: boolean;
  running: boolean;
  mode: "transaction";
  /** The pooled endpoint (its own port) while enabled. */
  endpoint: Endpoint | null;
  /** Whether this host can pool at all (PgBouncer installed). */
  available: boolean;
}

export interface StorageState {
  usageBytes: number;
  quotaBytes: number;
  readOnly: { reason: string } | null;
}

export interface RecoveryRequest {
  /** Recover to this moment; omitted = everything archived. */
  targetTime?: Date;
  /** Recover into a new instance with this id; omitted = in place (the current data directory is kept aside). */
  intoId?: string;
}

export interface RecoveryResult {
  instanceId: string;
  endpoint: Endpoint;
  fromBackupId: string;
  targetTime: string | null;
  timeline: number;
}

/** A branch: a new instance (already reserved with `reserve`) made a copy of its parent as of a moment. */
export interface BranchRequest {
  parentId: string;
  /** The moment to copy (within the parent's archive); omitted = now. */
  targetTime?: Date;
  /** The branch's passwords for the owner and the customer superuser the first time (later copies keep the branch's). */
  spec: InstanceSpec;
  /** Replace the data of a branch that exists (reset to the parent's current state), keeping its passwords. */
  reset?: boolean;
}

export interface BranchResult {
  instanceId: string;
  endpoint: Endpoint;
  /** The moment the branch's data is a copy of. */
  branchedAt: string;
  /** live: an online copy of the running parent (plus the WAL written during it); recovery: base backup + WAL replay. */
  method: "live" | "recovery";
  /** How files were copied: reflink (copy-on-write clones) or copy (the filesystem has no reflink). */
  copy: "reflink" | "copy" | "verified";
  fromBackupId: string | null;
  /**
   * Where the time went, ms per step: prepareMs, checkpointMs (pg_backup_start), copyMs (the files; for recovery the
   * restore and the replay together), walMs, configMs, startMs (crash recovery), credentialsMs, finishMs.
   */
  timings: Record<string, number>;
}

/** What a running server says of itself at one moment: the figures per-minute metrics ask for (src/metrics). */
export type { ServerSample };

export interface ExtensionOptions {
  /** Shared instances (dev) cannot load pg_stat_statements; defaults to size === "dev". */
  shared?: boolean;
}

export interface DatabaseProvider {
  readonly kind: string;

  /** Fast, idempotent: checks capacity, allocates the port and records the instance, so the URL is known at creation. */
  reserve(spec: InstanceSpec): Promise<Endpoint>;
  /** Idempotent: brings the instance to running, finishing whatever an earlier interrupted call left undone. */
  provision(spec: InstanceSpec): Promise<Endpoint>;
  endpoint(id: string): Promise<Endpoint>;
  start(id: string): Promise<void>;
  stop(id: string): Promise<void>;
  /** Soft delete: stops everything, keeps data and backups. */
  remove(id: string): Promise<void>;
  /** Deletes data, WAL archive and backups for good. */
  purge(id: string): Promise<void>;
  status(id: string): Promise<InstanceStatus>;
  /**
   * Old password refused at once; sessions of that role are terminated, except direct ones from `keepFrom`
   * (CIDRs: the owner's app networks, whose attached apps are rolled onto the new password right after), which
   * the caller ends with `endSessionsBefore(changedAt)` once the apps had time to roll.
   */
  rotatePassword(
    id: string,
    role: "owner" | "superuser",
    newPassword: string,
    opts?: { keepFrom?: string[] },
  ): Promise<{ changedAt: Date }>;
  /** Ends the role's sessions that began before the time (logged in with a password rotated since); answers how many. */
  endSessionsBefore(id: string, role: "owner" | "superuser", startedBefore: Date): Promise<number>;
  /** Server settings for the size, applied with a restart. */
  applySize(id: string, size: DbSize): Promise<void>;
  setStorageQuota(id: string, storageGb: number): Promise<StorageState>;
  /** The storage watcher's step: read-only above quota, writable again below it. */
  enforceStorageQuota(id: string): Promise<StorageState>;
  /** CIDRs allowed to connect; empty = all. The provider's always-allowed CIDRs are added. */
  setAllowlist(id: string, cidrs: string[]): Promise<void>;

  snapshot(id: string, label?: string): Promise<BackupInfo>;
  baseBackup(id: string): Promise<BackupInfo>;
  listBackups(id: string): Promise<BackupInfo[]>;
  listArchivedWal(id: string): Promise<BackupInfo[]>;
  verifyBackup(id: string, backupId: string): Promise<BackupVerification>;
  /** Retention: drops base backups and WAL not needed to recover to any moment within the last `days`. */
  pruneBackups(
    id: string,
    retentionDays: number,
    now?: Date,
  ): Promise<{ removedBackups: string[]; removedWal: number }>;
  walContinuity(id: string): Promise<WalContinuity>;
  recoverTo(id: string, req: RecoveryRequest): Promise<RecoveryResult>;
  /** Idempotent: fills the reserved instance `id` with a copy of its parent at a moment (or resets a branch to now). */
  branch(id: string, req: BranchRequest): Promise<BranchResult>;

  enableStandby(id: string): Promise<StandbyStatus>;
  standbyStatus(id: string): Promise<StandbyStatus>;
  rebuildStandby(id: string): Promise<StandbyStatus>;
  switchover(id: string): Promise<StandbyStatus>;
  disableStandby(id: string): Promise<void>;

  enablePool(id: string): Promise<PoolStatus>;
  disablePool(id: string): Promise<void>;
  poolStatus(id: string): Promise<PoolStatus>;

  /** The server's figures now (per-minute metrics); null when it is not running. Read-only, never waits. */
  sample(id: string): Promise<ServerSample | null>;

  /** Ensures the default extensions plus `names`; returns installed extension names. */
  ensureExtensions(id: string, names?: string[], opts?: ExtensionOptions): Promise<string[]>;
}

/**
 * Failure codes the API maps to responses:
 *  capacity → 503 provision_failed; extension_not_allowed, bad_cidr, bad_spec, ha_not_supported → 400;
 *  not_running / not_found → 400 / 404; the rest → 500 with the message.
 */
export type ProviderErrorCode =
  | "capacity"
  | "bad_spec"
  | "bad_cidr"
  | "not_found"
  | "not_provisioned"
  | "not_running"
  | "port_taken"
  | "pgbouncer_missing"
  | "extension_not_allowed"
  | "ha_not_supported"
  | "ha_not_enabled"
  | "ha_enabled"
  | "standby_not_ready"
  | "switchover_failed"
  | "backup_not_found"
  | "backup_failed"
  | "backup_corrupt"
  | "no_base_backup"
  | "recovery_failed"
  | "start_failed";

export class ProviderError extends Error implements MapsToApiError {
  readonly code: ProviderErrorCode;
  readonly details?: Record<string, unknown>;
  constructor(code: ProviderErrorCode, message: string, details?: Record<string, unknown>) {
    super(message);
    this.name = "ProviderError";
    this.code = code;
    this.details = details;
  }

  /**
   * The catalog entry a provider failure is when it reaches a request. Refusals (4xx) and capacity
   * keep their message, which tells the user what to change or what ran out; other server-side
   * failures answer with the catalog's sentence, since their message may name the host's paths and commands.
   */
  toApiError(): ApiError {
    const code = ProviderError.API_CODES[this.code];
    return statusOf(code) < 500 || this.code === "capacity" ? new ApiError(code, this.message) : new ApiError(code);
  }

  private static readonly API_CODES: Record<ProviderErrorCode, ErrorCode> = {
    capacity: "provision_failed",
    port_taken: "provision_failed",
    bad_spec: "invalid_request",
    bad_cidr: "bad_cidr",
    not_found: "not_found",
    backup_not_found: "not_found",
    not_provisioned: "still_creating",
    not_running: "not_running",
    pgbouncer_missing: "pool_unavailable",
    extension_not_allowed: "extension_not_allowed",
    ha_not_supported: "ha_not_supported",
    ha_not_enabled: "ha_not_enabled",
    ha_enabled: "conflict",
    standby_not_ready: "conflict",
    no_base_backup: "out_of_retention",
    backup_corrupt: "not_restorable",
    switchover_failed: "service_unavailable",
    backup_failed: "service_unavailable",
    recovery_failed: "service_unavailable",
    start_failed: "service_unavailable",
  };
}

export function isProviderError(err: unknown, code?: ProviderErrorCode): err is ProviderError {
  return err instanceof ProviderError && (code === undefined || err.code === code);
}

/** postgres:// URL for an endpoint; pass a password only where the spec lets one be shown. */
export function connectionUrl(ep: Endpoint, password?: string, user = ep.user): string {
  const auth =
    password === undefined ? encodeURIComponent(user) : `${encodeURIComponent(user)}:${encodeURIComponent(password)}`;
  return `postgres://${auth}@${ep.host}:${ep.port}/${encodeURIComponent(ep.database)}?sslmode=${ep.sslmode}`;
}
