import type { DbSize } from "../types.js";

/** What a size buys: real server settings, chosen so a 2-core/4 GB host can run several dev instances. */
export interface SizeProfile {
  maxConnections: number;
  sharedBuffers: string;
  workMem: string;
  maintenanceWorkMem: string;
  effectiveCacheSize: string;
  /** Dev instances count as shared: no preloaded pg_stat_statements, no standby. */
  shared: boolean;
  poolSize: number;
}

export const SIZE_PROFILES: Record<DbSize, SizeProfile> = {
  dev: {
    maxConnections: 25,
    sharedBuffers: "32MB",
    workMem: "2MB",
    maintenanceWorkMem: "32MB",
    effectiveCacheSize: "256MB",
    shared: true,
    poolSize: 10,
  },
  basic: {
    maxConnections: 100,
    sharedBuffers: "128MB",
    workMem: "4MB",
    maintenanceWorkMem: "64MB",
    effectiveCacheSize: "1GB",
    shared: false,
    poolSize: 40,
  },
  pro: {
    maxConnections: 200,
    sharedBuffers: "512MB",
    workMem: "8MB",
    maintenanceWorkMem: "128MB",
    effectiveCacheSize: "3GB",
    shared: false,
    poolSize: 80,
  },
  business: {
    maxConnections: 400,
    sharedBuffers: "2GB",
    workMem: "16MB",
    maintenanceWorkMem: "256MB",
    effectiveCacheSize: "6GB",
    shared: false,
    poolSize: 160,
  },
};

export type NodeRole =
  /**
   * initSync "syncfs": the start's crash recovery makes the data directory durable with one syncfs() of its filesystem
   * instead of an fsync of every file, one after another (PostgreSQL's default): on a directory the platform has just
   * written (a branch's copy) that walk is most of the start, about 2 ms a file even for files already on disk.
   */
  | { kind: "primary"; initSync?: "syncfs" }
  | { kind: "standby"; primaryConninfo: string }
  /** Point-in-time recovery: replays `restoreFrom` up to the target, then promotes. */
  | { kind: "recovery"; restoreFrom: string; targetTime: string | null };

export interface NodeSettingsInput {
  port: number;
  size: DbSize;
  socketDir: string;
  certFile: string;
  keyFile: string;
  walArchive: string;
  readOnly: boolean;
  role: NodeRole;
}

/** `cp` that succeeds when an identical copy is already archived (re-archiving after a crash), fails on a different one. */
export function archiveCommand(archiveDir: string): string {
  const dst = `${archiveDir}/%f`;
  return `if test -f ${dst}; then cmp -s %p ${dst}; else cp %p ${dst}.tmp && mv ${dst}.tmp ${dst}; fi`;
}

export function restoreCommand(archiveDir: string): string {
  return `cp ${archiveDir}/%f %p`;
}

/** The whole platform.conf of one node; rewritten completely by every operation that changes a setting. */
export function nodeSettings(input: NodeSettingsInput): Record<string, string | number | boolean> {
  const p = SIZE_PROFILES[input.size];
  const s: Record<string, string | number | boolean> = {
    // every address: local clients use loopback, app containers the host's address on their network (a gateway);
    // pg_hba decides who gets in (hba.ts: TLS, the allowlist). A running server picks a change of this up only when
    // it restarts (every start writes this file first), so servers started before listening on '*' stay on loopback
    // until their next start, resize or host restart.
    listen_addresses: "*",
    port: input.port,
    unix_socket_directories: input.socketDir,
    unix_socket_permissions: "0700",
    ssl: "on",
    ssl_cert_file: input.certFile,
    ssl_key_file: input.keyFile,
    password_encryption: "scram-sha-256",
    max_connections: p.maxConnections,
    superuser_reserved_connections: 3,
    shared_buffers: p.sharedBuffers,
    work_mem: p.workMem,
    maintenance_work_mem: p.maintenanceWorkMem,
    effective_cache_size: p.effectiveCacheSize,
    shared_preload_libraries: p.shared ? "" : "pg_stat_statements",
    wal_level: "replica",
    max_wal_senders: 5,
    wal_keep_size: "256MB",
    hot_standby: "on",
    archive_mode: "on",
    archive_command: archiveCommand(input.walArchive),
    archive_timeout: 60,
    restore_command: restoreCommand(input.walArchive),
    log_line_prefix: "%m [%p] %q%u@%d ",
    log_connections: "off",
  };
  if (input.readOnly) s.default_transaction_read_only = "on";
  if (input.role.kind === "primary" && input.role.initSync) s.recovery_init_sync_method = input.role.initSync;
  if (input.role.kind === "standby") {
    s.primary_conninfo = input.role.primaryConninfo;
    s.recovery_target_timeline = "latest";
    // the primary is on the same host: reconnect quickly after it restarts (default 5 s)
    s.wal_retrieve_retry_interval = "1s";
  }
  if (input.role.kind === "recovery") {
    s.restore_command = restoreCommand(input.role.restoreFrom);
    if (input.role.targetTime) {
      s.recovery_target_time = input.role.targetTime;
      s.recovery_target_inclusive = "on";
    }
    s.recovery_target_action = "promote";
    // no connections before promotion: pg_ctl -w then returns only once recovery has finished (or failed)
    s.hot_standby = "off";
  }
  return s;
}
