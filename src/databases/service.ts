import { randomUUID } from "node:crypto";
import type pg from "pg";
import type { Config } from "../config/config.js";
import { isUniqueViolation, type Db } from "../store/db.js";
import { ApiError, badRequest, notFound } from "../http/errors.js";
import type { JobQueue } from "../jobs/queue.js";
import type { Kernel } from "../kernel/kernel.js";
import type { InstanceFilter, Principal } from "../auth/principal.js";
import { OwnerReadCache, type OwnerChangeFeed } from "../kernel/change-feed.js";
import { ownerKey } from "../kernel/owner.js";
import type { SecretBox } from "../kernel/secrets.js";
import { auditedTransaction } from "../audit/record.js";
import { connectionUrl, DB_SIZES, type DatabaseProvider, type InstanceSpec } from "./provider/types.js";
import { ALLOWED_EXTENSIONS, generatePassword, normalizeCidr } from "./provider/local/index.js";
import * as repo from "./repo.js";
import type { Hosts } from "../kernel/hosts.js";
import { awaitCommand, requireHost, sendCommand, statusOnHost, supersedeRotations } from "./placement.js";

export const DEFAULT_STORAGE_GB = { dev: 10, basic: 50, pro: 100, business: 500 } as const;
export const REMOVAL_GRACE_DAYS = 7;
export const COMMAND_JOB = "databases.command";

export interface DatabasesDeps {
  db: Db;
  config: Pick<Config, "baseDomain" | "internalDomain" | "dbRestoreEnabled">;
  jobs: Pick<JobQueue, "send" | "hostAvailable">;
  provider: DatabaseProvider;
  /** every creation and paid update asks it first (402 insufficient_funds, budgets, deploy rules) */
  admission: Pick<Kernel, "admit">;
  /** whether this platform's hosts can pool connections */
  poolAvailable: () => boolean;
  /** owners' changes across processes: the list cache drops an owner's entries on each */
  changes: OwnerChangeFeed;
  /** seals the initial passwords and passwords waiting in commands */
  secrets: SecretBox;
  /** placement: the host that holds a new instance (src/hosts) */
  hosts: Pick<Hosts, "local" | "place">;
}

export type Size = repo.DatabaseRow["size"];

export type CreateInput = {
  name: string;
  slug?: string;
  engine?: "postgres";
  version?: 16 | 17;
  size?: Size;
  storage_gb?: number;
  pitr_retention_days?: number;
};
export type ComputeSettings = { enabled: boolean; min_size?: Size; max_size?: Size; cpu_threshold_pct?: number };
export type StorageSettings = { enabled: boolean; max_gb?: number; threshold_pct?: number; step_gb?: number };
export type HaAction = "ha_enable" | "ha_disable" | "ha_rebuild" | "ha_switchover";

/** What a mutation decided after checking the locked row: the command to record and the row's new intent. */
type Intent = { kind: string; params?: Record<string, unknown>; patch?: Partial<repo.DatabaseRow> };

/** Columns sealed at rest (kernel/secrets.ts); the name is bound into each ciphertext. */
export const SEALED = {
  password: "databases.initial_password",
  superuserPassword: "databases.initial_superuser_password",
  commandPassword: "database_commands.params.password",
} as const;

export function instanceSpec(row: repo.DatabaseRow, config: DatabasesDeps["config"], secrets: SecretBox): InstanceSpec {
  return {
    id: row.id,
    version: row.version,
    size: row.size,
    storageGb: row.storage_gb,
    database: row.db_name,
    user: row.db_user,
    password: secrets.openNullable(row.initial_password, SEALED.password) ?? generatePassword(),
    superuserPassword:
      secrets.openNullable(row.initial_superuser_password, SEALED.superuserPassword) ?? generatePassword(),
    hostnames: [`${row.slug}.db.${config.baseDomain}`, `${row.slug}.db.${config.internalDomain}`],
    allowlist: row.allowlist.map((e) => e.cidr),
  };
}

/**
 * Managed PostgreSQL for a caller: every read is within the principal's owner, every change commits
 * with the caller's audit row and, for server work, a command row whose job runs after the commit
 * (the reconciler re-queues it if that send is lost).
 */
export function databasesService({
  db,
  config,
  jobs,
  provider,
  admission,
  poolAvailable,
  changes,
  secrets,
  hosts,
}: DatabasesDeps) {
  // lists are served from memory until the owner's next change (NOTIFY from a trigger, or this process's own write)
  const lists = new OwnerReadCache<repo.DatabaseRow[]>(changes);
  const changed = (p: Principal) => changes.changed(ownerKey(p.owner));

  async function get(p: Principal, ref: string): Promise<repo.DatabaseRow> {
    const row = await repo.findDatabase(db, p.owner, ref);
    if (!row) throw notFound("database");
    return row;
  }

  async function locked(tx: pg.PoolClient, p: Principal, ref: string): Promise<repo.DatabaseRow> {
    const row = await repo.findDatabase(tx, p.owner, ref, { forUpdate: true });
    if (!row) throw notFound("database");
    return row;
  }

  /** Checks the request against the locked row (`decide` throws to refuse), records intent and command with the audit row, then queues the job. */
  async function command(
    p: Principal,
    ref: string,
    decide: (row: repo.DatabaseRow, tx: pg.PoolClient) => Intent | Promise<Intent>,
  ) {
    const commandId = randomUUID();
    const row = await auditedTransaction(db, p, async (tx) => {
      const row = await locked(tx, p, ref);
      const { kind, params = {}, patch = {} } = await decide(row, tx);
      await repo.updateDatabase(tx, row.id, patch);
      await repo.insertCommand(tx, { id: commandId, databaseId: row.id, kind, params });
      return row;
    });
    changed(p);
    await sendCommand(db, jobs, COMMAND_JOB, commandId).catch(() => {});
    return { row, commandId };
  }

  /** A change of settings the store alone holds; returns the row as changed. */
  async function update(
    p: Principal,
    ref: string,
    decide: (row: repo.DatabaseRow) => Partial<repo.DatabaseRow>,
  ): Promise<repo.DatabaseRow> {
    const updated = await auditedTransaction(db, p, async (tx) => {
      const row = await locked(tx, p, ref);
      await repo.updateDatabase(tx, row.id, decide(row));
      return (await repo.findDatabaseById(tx, row.id))!;
    });
    changed(p);
    return updated;
  }

  const list = (p: Principal, filter: InstanceFilter) =>
    lists.get(ownerKey(p.owner), filter === null ? "*" : filter.join(","), () =>
      repo.listDatabases(db, p.owner, filter),
    );

  async function detail(p: Principal, ref: string) {
    const row = await get(p, ref);
    return { row, backups: await repo.recentBackups(db, row.id), commands: await repo.recentCommands(db, row.id) };
  }

  const backups = (p: Principal, limit: number) => repo.backupsOf(db, p.owner, limit);

  async function create(p: Principal, input: CreateInput) {
    const slug = input.slug ?? input.name;
    if (!/^[a-z0-9][a-z0-9-]{1,38}[a-z0-9]$/.test(slug))
      throw badRequest(
        "bad_slug",
        "slug must be 3-40 lowercase letters, digits and hyphens, not starting or ending with a hyphen.",
      );
    const size = input.size ?? "dev";
    const ident = slug.replace(/-/g, "_");
    const row: repo.DatabaseRow = {
      id: randomUUID(),
      account_id: p.accountId,
      owner_kind: p.owner.kind,
      owner_id: p.owner.id,
      name: input.name,
      slug,
      label: null,
      engine: "postgres",
      version: input.version ?? 17,
      size,
      storage_gb: input.storage_gb ?? DEFAULT_STORAGE_GB[size],
      pitr_retention_days: input.pitr_retention_days ?? 7,
      desired_state: "running",
      state: "creating",
      status_reason: null,
      db_name: ident,
      db_user: ident,
      host: null,
      port: null,
      allowlist: [],
      authorized_clients: [],
      compute_autoscale: {},
      storage_autoscale: {},
      ha_enabled: false,
      pool_enabled: false,
      extensions: [],
      initial_password: generatePassword(),
      initial_superuser_password: generatePassword(),
      initial_credentials_revealed_at: null,
      created_at: new Date(),
      removed_at: null,
    };
    row.host_id = await hosts.place(db, { kind: "database", owner: p.owner, size });
    // on another host (this process has no worker role) the reservation is that host's first command
    const here = row.host_id === hosts.local.id;
    const commandId = randomUUID();
    try {
      await auditedTransaction(db, p, async (tx) => {
        await admission.admit(tx, {
          owner: p.owner,
          accountId: p.accountId,
          kind: "database",
          size,
          storageGb: row.storage_gb,
        });
        // the passwords are kept sealed until the one-time reveal; this call's answer shows them from memory
        await repo.insertDatabase(tx, {
          ...row,
          initial_password: secrets.seal(row.initial_password!, SEALED.password),
          initial_superuser_password: secrets.seal(row.initial_superuser_password!, SEALED.superuserPassword),
        });
        if (!here) return repo.insertCommand(tx, { id: commandId, databaseId: row.id, kind: "reserve", params: {} });
        // capacity (ports, disk, instance limit) is known now, so a refusal is a 503 at creation, not a failed instance
        // later (ProviderError maps itself: capacity → provision_failed)
        const endpoint = await provider.reserve(instanceSpec(row, config, secrets));
        row.host = endpoint.host;
        row.port = endpoint.port;
        await repo.updateDatabase(tx, row.id, { host: endpoint.host, port: endpoint.port });
        await repo.insertCommand(tx, { id: commandId, databaseId: row.id, kind: "provision", params: {} });
      });
    } catch (err) {
      if (isUniqueViolation(err, "databases_slug_live"))
        throw new ApiError("slug_taken", `The slug "${slug}" is in use.`);
      throw err;
    }
    changed(p);
    await sendCommand(db, jobs, COMMAND_JOB, commandId).catch(() => {});
    if (!here) Object.assign(row, await awaitReservation(row, commandId));
    return { row, commandId };
  }

  /** A reservation made by the instance's host: capacity is known when creation answers, as on one host. */
  async function awaitReservation(
    row: repo.DatabaseRow,
    commandId: string,
  ): Promise<Pick<repo.DatabaseRow, "host" | "port">> {
    const done = await awaitCommand(db, jobs, commandId, row.host_id!, 30_000).catch((err) => err as Error);
    const reserved = done instanceof Error ? null : await repo.findDatabaseById(db, row.id);
    if (done instanceof Error || done?.status !== "succeeded" || !reserved?.port) {
      // nothing was promised yet: the instance is forgotten rather than left failed with its slug taken
      await repo.forgetUnreserved(db, row.id);
      if (done instanceof Error) throw done;
      throw new ApiError(
        "provision_failed",
        done?.error ?? "The host did not reserve the instance in time; try again.",
      );
    }
    return { host: reserved.host, port: reserved.port };
  }

  function requireLive(row: repo.DatabaseRow) {
    if (row.state === "removed") throw new ApiError("database_removed", "This database was deleted; restore it first.");
  }

  const stop = (p: Principal, ref: string) =>
    command(p, ref, (row) => {
      if (row.size !== "dev")
        throw badRequest("stop_not_supported", "Only dev databases can be stopped; basic and above are always on.");
      if (row.state !== "running") throw badRequest("not_running", `The database is ${row.state}, not running.`);
      return { kind: "stop", patch: { desired_state: "paused" } };
    });

  const start = (p: Principal, ref: string) =>
    command(p, ref, (row) => {
      if (row.state !== "paused") throw badRequest("not_stopped", `The database is ${row.state}, not stopped.`);
      return { kind: "start", patch: { desired_state: "running" } };
    });

  const remove = (p: Principal, ref: string) =>
    command(p, ref, (row) => {
      requireLive(row);
      return {
        kind: "remove",
        patch: { desired_state: "removed", state: "removed", removed_at: new Date(), pool_enabled: false },
      };
    });

  const backup = (p: Principal, ref: string, label?: string) =>
    command(p, ref, (row) => {
      if (row.state !== "running")
        throw badRequest("not_running", `Backups need a running database; it is ${row.state}.`);
      return { kind: "snapshot", params: { label: label ?? null } };
    });

  /** Validates the target time first; performing the restore is behind DB_RESTORE_ENABLED (spec: 501 restore_not_ready). */
  const restore = (p: Principal, ref: string, targetTime?: string) =>
    command(p, ref, async (row, tx) => {
      let target: Date | undefined;
      if (targetTime !== undefined) {
        const rfc3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;
        target = new Date(targetTime);
        if (!rfc3339.test(targetTime) || Number.isNaN(target.getTime()))
          throw badRequest("bad_time", "The target time must be an RFC 3339 timestamp, e.g. 2026-01-02T03:04:05Z.");
        if (target.getTime() > Date.now()) throw badRequest("future_time", "The target time is in the future.");
        const oldest = Math.max(Date.now() - row.pitr_retention_days * 86_400_000, row.created_at.getTime());
        if (target.getTime() < oldest)
          throw badRequest(
            "out_of_retention",
            `The target time is outside the ${row.pitr_retention_days}-day retention window of this database.`,
          );
      }
      if (!config.dbRestoreEnabled)
        throw new ApiError("restore_not_ready", "Restore is not available yet on this platform.");
      if (
        row.state === "removed" &&
        row.removed_at &&
        Date.now() - row.removed_at.getTime() > REMOVAL_GRACE_DAYS * 86_400_000
      )
        throw notFound("database");
      if (row.state === "creating")
        throw new ApiError(
          "not_restorable",
          "The database is still being created or restored; wait until it is running.",
        );
      if (target) {
        // recovery starts from a base backup finished before the target: earlier moments cannot be reached
        const first = await repo.firstRecoverableAt(tx, row.id);
        if (!first || target.getTime() < first.getTime()) {
          throw badRequest(
            "out_of_retention",
            first
              ? `The earliest moment this database can be restored to is ${first.toISOString()} (its first base backup).`
              : "This database has no base backup yet, so no point in time can be restored; try again in a minute.",
          );
        }
      }
      return {
        kind: "restore",
        params: { target_time: target?.toISOString() ?? null, from_state: row.state },
        patch: { desired_state: "running", state: "creating", removed_at: null },
      };
    });

  /** The new password is returned once; the job applies it, and this call waits so the old one is refused when it answers. */
  async function rotatePassword(p: Principal, ref: string) {
    const password = generatePassword();
    const { row, commandId } = await command(p, ref, async (row, tx) => {
      if (row.state !== "running")
        throw badRequest("not_running", `The database is ${row.state}; start it to rotate its password.`);
      await requireHost(jobs, row);
      await supersedeRotations(tx, row.id);
      return { kind: "rotate_password", params: { password: secrets.seal(password, SEALED.commandPassword) } };
    });
    const done = await awaitCommand(db, jobs, commandId, row.host_id!, 60_000);
    if (done?.status !== "succeeded")
      throw new ApiError(
        "rotation_failed",
        done?.error ?? "The password rotation did not finish in time; the old password still works.",
      );
    return { row, commandId, password };
  }

  const setAllowlist = (p: Principal, ref: string, entries: { cidr: string; label?: string }[]) =>
    command(p, ref, (row) => {
      requireLive(row);
      const normalised = entries.map((e) => {
        try {
          return { cidr: normalizeCidr(e.cidr), label: e.label ?? "" };
        } catch {
          throw badRequest("bad_cidr", `"${e.cidr}" is not a CIDR block such as 203.0.113.0/24.`);
        }
      });
      return { kind: "allowlist", patch: { allowlist: normalised } };
    });

  const extensions = (p: Principal, ref: string, names: string[]) =>
    command(p, ref, (row) => {
      requireLive(row);
      const unknown = names.filter((n) => !ALLOWED_EXTENSIONS.has(n) && n !== "pg_stat_statements");
      if (unknown.length) throw badRequest("extension_not_allowed", `Not an allowed extension: ${unknown.join(", ")}.`);
      if (names.includes("pg_stat_statements") && row.size === "dev")
        throw badRequest("extension_not_allowed", "dev databases are shared and cannot enable pg_stat_statements.");
      return { kind: "extensions", params: { names } };
    });

  /** A resize is a paid update when the new size costs money: admission decides, like at creation. */
  const resize = (p: Principal, ref: string, size: Size, storageGb?: number) =>
    command(p, ref, async (row, tx) => {
      requireLive(row);
      if (storageGb !== undefined && storageGb < row.storage_gb)
        throw badRequest("invalid_request", "storage_gb cannot shrink.");
      await admission.admit(tx, {
        owner: p.owner,
        accountId: p.accountId,
        kind: "database",
        size,
        storageGb: storageGb ?? row.storage_gb,
      });
      return { kind: "resize", params: { size, storage_gb: storageGb ?? row.storage_gb } };
    });

  const ha = (p: Principal, ref: string, action: HaAction) =>
    command(p, ref, (row) => {
      requireLive(row);
      if (row.size === "dev") throw badRequest("ha_not_supported", "High availability needs size basic or above.");
      if (action !== "ha_enable" && !row.ha_enabled)
        throw badRequest("ha_not_enabled", "High availability is not enabled on this database.");
      if (row.state !== "running") throw badRequest("not_running", `The database is ${row.state}, not running.`);
      return {
        kind: action,
        patch: action === "ha_enable" ? { ha_enabled: true } : action === "ha_disable" ? { ha_enabled: false } : {},
      };
    });

  async function haStatus(p: Principal, ref: string) {
    const row = await get(p, ref);
    return {
      enabled: row.ha_enabled,
      standby: row.ha_enabled
        ? await statusOnHost(db, hosts.local.id, row, () => provider.standbyStatus(row.id), [
            "ha_enable",
            "ha_rebuild",
            "ha_switchover",
          ])
        : null,
    };
  }

  const pool = (p: Principal, ref: string, enabled: boolean) =>
    command(p, ref, (row) => {
      requireLive(row);
      if (enabled && !poolAvailable())
        throw new ApiError(
          "pool_unavailable",
          "Connection pooling needs PgBouncer, which is not installed on this platform's hosts.",
        );
      return { kind: enabled ? "pool_enable" : "pool_disable", patch: { pool_enabled: enabled } };
    });

  async function poolStatus(p: Principal, ref: string) {
    const row = await get(p, ref);
    const st = row.pool_enabled
      ? await statusOnHost(db, hosts.local.id, row, () => provider.poolStatus(row.id), ["pool_enable"])
      : null;
    return {
      enabled: row.pool_enabled,
      mode: "transaction",
      pooled_url: st?.endpoint ? connectionUrl(st.endpoint) : null,
      available: poolAvailable(),
    };
  }

  const authorizeClients = (p: Principal, ref: string, groups: string[]) =>
    update(p, ref, () => ({ authorized_clients: [...new Set(groups)] }));

  const setCompute = (p: Principal, ref: string, settings: ComputeSettings) =>
    update(p, ref, () => {
      const { min_size, max_size } = settings;
      if (min_size && max_size && DB_SIZES.indexOf(min_size) > DB_SIZES.indexOf(max_size))
        throw badRequest("invalid_request", "min_size must not be above max_size.");
      return { compute_autoscale: settings };
    });

  const setStorage = (p: Principal, ref: string, settings: StorageSettings) =>
    update(p, ref, (row) => {
      if (settings.max_gb !== undefined && settings.max_gb < row.storage_gb)
        throw badRequest("invalid_request", "max_gb must be at least the current storage_gb.");
      return { storage_autoscale: settings };
    });

  const rename = (p: Principal, ref: string, label: string) => update(p, ref, () => ({ label }));

  /** Apps attached to the database: none until apps exist (the lookup still answers 404 for another owner's database). */
  async function attachedApps(p: Principal, ref: string): Promise<{ id: string; slug: string }[]> {
    await get(p, ref);
    return [];
  }

  /** The initial passwords, once; the row is locked while the store forgets them, in the transaction of the caller's audit row. */
  const revealInitialCredentials = (p: Principal, ref: string) =>
    auditedTransaction(db, p, async (tx) => {
      const row = await locked(tx, p, ref);
      if (row.initial_credentials_revealed_at || row.initial_password === null)
        throw new ApiError(
          "credentials_already_revealed",
          "The initial credentials were already revealed once; rotate the password to get a new one.",
        );
      if (row.state === "creating")
        throw new ApiError("still_creating", "The database is still being created; try again when it is running.");
      await repo.forgetInitialCredentials(tx, row.id);
      return {
        row,
        secrets: {
          password: secrets.open(row.initial_password, SEALED.password),
          superuser_password: secrets.open(row.initial_superuser_password!, SEALED.superuserPassword),
        },
      };
    });

  return {
    get,
    list,
    detail,
    backups,
    create,
    stop,
    start,
    remove,
    backup,
    restore,
    rotatePassword,
    setAllowlist,
    extensions,
    resize,
    ha,
    haStatus,
    pool,
    poolStatus,
    authorizeClients,
    setCompute,
    setStorage,
    rename,
    attachedApps,
    revealInitialCredentials,
  };
}

export type DatabasesService = ReturnType<typeof databasesService>;
