import { randomUUID } from "node:crypto";
import type { Config } from "../config/config.js";
import { inTransaction, isUniqueViolation, type Db } from "../store/db.js";
import { ApiError, badRequest, notFound } from "../http/errors.js";
import type { JobQueue } from "../jobs/queue.js";
import { connectionUrl, isProviderError, type DatabaseProvider, type Endpoint, type InstanceSpec } from "./provider/types.js";
import { ALLOWED_EXTENSIONS, findPgbouncer, generatePassword, normalizeCidr } from "./provider/local/index.js";
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
  /** placement: the host that holds a new instance (src/hosts) */
  hosts: Pick<Hosts, "local" | "place">;
}

export type CreateInput = {
  name: string; slug?: string; engine?: "postgres"; version?: 16 | 17; size?: repo.DatabaseRow["size"];
  storage_gb?: number; pitr_retention_days?: number;
};

export function instanceSpec(row: repo.DatabaseRow, config: DatabasesDeps["config"]): InstanceSpec {
  return {
    id: row.id,
    version: row.version,
    size: row.size,
    storageGb: row.storage_gb,
    database: row.db_name,
    user: row.db_user,
    password: row.initial_password ?? generatePassword(),
    superuserPassword: row.initial_superuser_password ?? generatePassword(),
    hostnames: [`${row.slug}.db.${config.baseDomain}`, `${row.slug}.db.${config.internalDomain}`],
    allowlist: row.allowlist.map((e) => e.cidr),
  };
}

export function databasesService({ db, config, jobs, provider, hosts }: DatabasesDeps) {
  async function get(accountId: string, ref: string): Promise<repo.DatabaseRow> {
    const row = await repo.findDatabase(db, accountId, ref);
    if (!row) throw notFound("database");
    return row;
  }

  /** Records a command and queues its job; the reconciler re-queues it if the queueing itself is lost. */
  async function enqueue(row: repo.DatabaseRow, kind: string, params: Record<string, unknown> = {}, patch: Partial<repo.DatabaseRow> = {}): Promise<string> {
    const id = randomUUID();
    await inTransaction(db, async (tx) => {
      await repo.updateDatabase(tx, row.id, patch);
      await repo.insertCommand(tx, { id, databaseId: row.id, kind, params });
    });
    await sendCommand(db, jobs, COMMAND_JOB, id).catch(() => {});
    return id;
  }

  async function create(accountId: string, input: CreateInput) {
    const slug = input.slug ?? input.name;
    if (!/^[a-z0-9][a-z0-9-]{1,38}[a-z0-9]$/.test(slug)) throw badRequest("bad_slug", "slug must be 3-40 lowercase letters, digits and hyphens, not starting or ending with a hyphen.");
    const size = input.size ?? "dev";
    const ident = slug.replace(/-/g, "_");
    const row: repo.DatabaseRow = {
      id: randomUUID(), account_id: accountId, name: input.name, slug, label: null, engine: "postgres", version: input.version ?? 17, size,
      storage_gb: input.storage_gb ?? DEFAULT_STORAGE_GB[size], pitr_retention_days: input.pitr_retention_days ?? 7,
      desired_state: "running", state: "creating", status_reason: null, db_name: ident, db_user: ident, host: null, port: null,
      allowlist: [], authorized_clients: [], compute_autoscale: {}, storage_autoscale: {}, ha_enabled: false, pool_enabled: false, extensions: [],
      initial_password: generatePassword(), initial_superuser_password: generatePassword(), initial_credentials_revealed_at: null,
      created_at: new Date(), removed_at: null,
    };
    row.host_id = await hosts.place(db, { kind: "database", owner: { kind: "account", id: accountId }, size });
    // on another host (this process has no worker role) the reservation is that host's first command
    const here = row.host_id === hosts.local.id;
    const commandId = randomUUID();
    try {
      await inTransaction(db, async (tx) => {
        await tx.query(
          `INSERT INTO databases (id, account_id, owner_kind, owner_id, name, slug, engine, version, size, storage_gb, pitr_retention_days, desired_state, state,
             db_name, db_user, initial_password, initial_superuser_password, host_id)
           VALUES ($1, $2, 'account', $2, $3, $4, 'postgres', $5, $6, $7, $8, 'running', 'creating', $9, $10, $11, $12, $13)`,
          [row.id, accountId, row.name, slug, row.version, size, row.storage_gb, row.pitr_retention_days, row.db_name, row.db_user, row.initial_password, row.initial_superuser_password, row.host_id],
        );
        if (!here) return repo.insertCommand(tx, { id: commandId, databaseId: row.id, kind: "reserve", params: {} });
        // capacity (ports, disk, instance limit) is known now, so a refusal is a 503 at creation, not a failed instance later
        let endpoint: Endpoint;
        try {
          endpoint = await provider.reserve(instanceSpec(row, config));
        } catch (err) {
          if (isProviderError(err, "capacity")) throw new ApiError("provision_failed", err.message);
          throw err;
        }
        row.host = endpoint.host;
        row.port = endpoint.port;
        await repo.updateDatabase(tx, row.id, { host: endpoint.host, port: endpoint.port });
        await repo.insertCommand(tx, { id: commandId, databaseId: row.id, kind: "provision", params: {} });
      });
    } catch (err) {
      if (isUniqueViolation(err, "databases_slug_live")) throw new ApiError("slug_taken", `The slug "${slug}" is in use.`);
      throw err;
    }
    await sendCommand(db, jobs, COMMAND_JOB, commandId).catch(() => {});
    if (!here) Object.assign(row, await awaitReservation(row, commandId));
    return { row, commandId };
  }

  /** A reservation made by the instance's host: capacity is known when creation answers, as on one host. */
  async function awaitReservation(row: repo.DatabaseRow, commandId: string): Promise<Pick<repo.DatabaseRow, "host" | "port">> {
    const done = await awaitCommand(db, jobs, commandId, row.host_id!, 30_000).catch((err) => err as Error);
    const reserved = done instanceof Error ? null : await repo.findDatabaseById(db, row.id);
    if (done instanceof Error || done?.status !== "succeeded" || !reserved?.port) {
      // nothing was promised yet: the instance is forgotten rather than left failed with its slug taken
      await inTransaction(db, async (tx) => {
        await tx.query("DELETE FROM database_commands WHERE database_id = $1", [row.id]);
        await tx.query("DELETE FROM databases WHERE id = $1", [row.id]);
      });
      if (done instanceof Error) throw done;
      throw new ApiError("provision_failed", done?.error ?? "The host did not reserve the instance in time; try again.");
    }
    return { host: reserved.host, port: reserved.port };
  }

  function requireLive(row: repo.DatabaseRow) {
    if (row.state === "removed") throw new ApiError("database_removed", "This database was deleted; restore it first.");
  }

  async function stop(row: repo.DatabaseRow) {
    if (row.size !== "dev") throw badRequest("stop_not_supported", "Only dev databases can be stopped; basic and above are always on.");
    if (row.state !== "running") throw badRequest("not_running", `The database is ${row.state}, not running.`);
    return enqueue(row, "stop", {}, { desired_state: "paused" });
  }

  async function start(row: repo.DatabaseRow) {
    if (row.state !== "paused") throw badRequest("not_stopped", `The database is ${row.state}, not stopped.`);
    return enqueue(row, "start", {}, { desired_state: "running" });
  }

  async function remove(row: repo.DatabaseRow) {
    requireLive(row);
    return enqueue(row, "remove", {}, { desired_state: "removed", state: "removed", removed_at: new Date(), pool_enabled: false });
  }

  async function backup(row: repo.DatabaseRow, label?: string) {
    if (row.state !== "running") throw badRequest("not_running", `Backups need a running database; it is ${row.state}.`);
    return enqueue(row, "snapshot", { label: label ?? null });
  }

  /** Validates the target time first; performing the restore is behind DB_RESTORE_ENABLED (spec: 501 restore_not_ready). */
  async function restore(row: repo.DatabaseRow, targetTime?: string) {
    let target: Date | undefined;
    if (targetTime !== undefined) {
      const rfc3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;
      target = new Date(targetTime);
      if (!rfc3339.test(targetTime) || Number.isNaN(target.getTime())) throw badRequest("bad_time", "The target time must be an RFC 3339 timestamp, e.g. 2026-01-02T03:04:05Z.");
      if (target.getTime() > Date.now()) throw badRequest("future_time", "The target time is in the future.");
      const oldest = Math.max(Date.now() - row.pitr_retention_days * 86_400_000, row.created_at.getTime());
      if (target.getTime() < oldest) throw badRequest("out_of_retention", `The target time is outside the ${row.pitr_retention_days}-day retention window of this database.`);
    }
    if (!config.dbRestoreEnabled) throw new ApiError("restore_not_ready", "Restore is not available yet on this platform.");
    if (row.state === "removed" && row.removed_at && Date.now() - row.removed_at.getTime() > REMOVAL_GRACE_DAYS * 86_400_000) throw notFound("database");
    if (row.state === "creating") throw new ApiError("not_restorable", "The database is still being created or restored; wait until it is running.");
    if (target) {
      // recovery starts from a base backup finished before the target: earlier moments cannot be reached
      const { rows } = await db.query<{ first: Date | null }>(
        "SELECT min(finished_at) AS first FROM database_backups WHERE database_id = $1 AND kind IN ('base', 'snapshot') AND status = 'complete'", [row.id],
      );
      const first = rows[0]?.first ?? null;
      if (!first || target.getTime() < first.getTime()) {
        throw badRequest("out_of_retention", first
          ? `The earliest moment this database can be restored to is ${first.toISOString()} (its first base backup).`
          : "This database has no base backup yet, so no point in time can be restored; try again in a minute.");
      }
    }
    return enqueue(row, "restore", { target_time: target?.toISOString() ?? null, from_state: row.state }, { desired_state: "running", state: "creating", removed_at: null });
  }

  /** The new password is returned once; the job applies it, and this call waits so the old one is refused when it answers. */
  async function rotatePassword(row: repo.DatabaseRow) {
    if (row.state !== "running") throw badRequest("not_running", `The database is ${row.state}; start it to rotate its password.`);
    await requireHost(jobs, row);
    const password = generatePassword();
    await supersedeRotations(db, row.id);
    const commandId = await enqueue(row, "rotate_password", { password });
    const done = await awaitCommand(db, jobs, commandId, row.host_id!, 60_000);
    if (done?.status !== "succeeded") throw new ApiError("rotation_failed", done?.error ?? "The password rotation did not finish in time; the old password still works.");
    return { commandId, password };
  }

  async function setAllowlist(row: repo.DatabaseRow, entries: { cidr: string; label?: string }[]) {
    requireLive(row);
    const normalised = entries.map((e) => {
      try {
        return { cidr: normalizeCidr(e.cidr), label: e.label ?? "" };
      } catch {
        throw badRequest("bad_cidr", `"${e.cidr}" is not a CIDR block such as 203.0.113.0/24.`);
      }
    });
    return enqueue(row, "allowlist", {}, { allowlist: normalised });
  }

  async function extensions(row: repo.DatabaseRow, names: string[]) {
    requireLive(row);
    const unknown = names.filter((n) => !ALLOWED_EXTENSIONS.has(n) && n !== "pg_stat_statements");
    if (unknown.length) throw badRequest("extension_not_allowed", `Not an allowed extension: ${unknown.join(", ")}.`);
    if (names.includes("pg_stat_statements") && row.size === "dev") throw badRequest("extension_not_allowed", "dev databases are shared and cannot enable pg_stat_statements.");
    return enqueue(row, "extensions", { names });
  }

  async function resize(row: repo.DatabaseRow, size: repo.DatabaseRow["size"], storageGb?: number) {
    requireLive(row);
    if (storageGb !== undefined && storageGb < row.storage_gb) throw badRequest("invalid_request", "storage_gb cannot shrink.");
    return enqueue(row, "resize", { size, storage_gb: storageGb ?? row.storage_gb });
  }

  async function ha(row: repo.DatabaseRow, action: "ha_enable" | "ha_disable" | "ha_rebuild" | "ha_switchover") {
    requireLive(row);
    if (row.size === "dev") throw badRequest("ha_not_supported", "High availability needs size basic or above.");
    if (action !== "ha_enable" && !row.ha_enabled) throw badRequest("ha_not_enabled", "High availability is not enabled on this database.");
    if (row.state !== "running") throw badRequest("not_running", `The database is ${row.state}, not running.`);
    return enqueue(row, action, {}, action === "ha_enable" ? { ha_enabled: true } : action === "ha_disable" ? { ha_enabled: false } : {});
  }

  async function pool(row: repo.DatabaseRow, enabled: boolean) {
    requireLive(row);
    if (enabled && !findPgbouncer()) throw new ApiError("pool_unavailable", "Connection pooling needs PgBouncer, which is not installed on this platform's hosts.");
    return enqueue(row, enabled ? "pool_enable" : "pool_disable", {}, { pool_enabled: enabled });
  }

  async function revealInitialCredentials(row: repo.DatabaseRow) {
    if (row.initial_credentials_revealed_at || row.initial_password === null) throw new ApiError("credentials_already_revealed", "The initial credentials were already revealed once; rotate the password to get a new one.");
    if (row.state === "creating") throw new ApiError("still_creating", "The database is still being created; try again when it is running.");
    const res = await db.query(
      `UPDATE databases SET initial_credentials_revealed_at = now(), initial_password = NULL, initial_superuser_password = NULL
        WHERE id = $1 AND initial_credentials_revealed_at IS NULL RETURNING id`,
      [row.id],
    );
    if (!res.rowCount) throw new ApiError("credentials_already_revealed", "The initial credentials were already revealed once.");
    return { password: row.initial_password, superuser_password: row.initial_superuser_password! };
  }

  /** Pooler or standby status from the provider of the instance's host (placement.ts statusOnHost). */
  const poolStatus = (row: repo.DatabaseRow) => statusOnHost(db, hosts.local.id, row, () => provider.poolStatus(row.id), ["pool_enable"]);
  const standbyStatus = (row: repo.DatabaseRow) => statusOnHost(db, hosts.local.id, row, () => provider.standbyStatus(row.id), ["ha_enable", "ha_rebuild", "ha_switchover"]);

  return { get, create, stop, start, remove, backup, restore, rotatePassword, setAllowlist, extensions, resize, ha, pool, revealInitialCredentials, enqueue, poolStatus, standbyStatus };
}

export type DatabasesService = ReturnType<typeof databasesService>;

/** The API shape of an instance; passwords (and URLs carrying them) only where given. */
export function databaseView(row: repo.DatabaseRow, config: DatabasesDeps["config"], secrets?: { password?: string; superuser_password?: string }) {
  const ep: Endpoint = { host: row.host ?? "127.0.0.1", port: row.port ?? 5432, database: row.db_name, user: row.db_user, superuser: "postgres", sslmode: "require" };
  const url = connectionUrl(ep, secrets?.password);
  return {
    id: row.id, name: row.name, slug: row.slug, label: row.label, engine: row.engine, version: row.version, size: row.size,
    storage_gb: row.storage_gb, pitr_retention_days: row.pitr_retention_days, state: row.state, desired_state: row.desired_state,
    status_reason: row.status_reason,
    public_host: `${row.slug}.db.${config.baseDomain}`,
    internal_host: `${row.slug}.db.${config.internalDomain}`,
    host: ep.host, port: ep.port, database: row.db_name, user: row.db_user,
    database_url: url, database_url_public: url,
    allowlist: row.allowlist, ha_enabled: row.ha_enabled, pool_enabled: row.pool_enabled, extensions: row.extensions,
    compute: row.compute_autoscale, storage: row.storage_autoscale, authorized_clients: row.authorized_clients,
    created_at: row.created_at.toISOString(), removed_at: row.removed_at?.toISOString() ?? null,
    backup_health: row.backup_health ?? null,
    storage_used_bytes: row.storage_used_bytes === null || row.storage_used_bytes === undefined ? null : Number(row.storage_used_bytes),
    ...(secrets?.password ? { password: secrets.password } : {}),
    ...(secrets?.superuser_password ? { superuser_password: secrets.superuser_password, superuser_database_url: connectionUrl(ep, secrets.superuser_password, "postgres") } : {}),
  };
}
