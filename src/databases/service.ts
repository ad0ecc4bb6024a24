import { randomUUID } from "node:crypto";
import { isUniqueViolation } from "../store/db.js";
import { ApiError, badRequest, notFound } from "../http/errors.js";
import type { InstanceFilter, Principal } from "../auth/principal.js";
import { OwnerReadCache } from "../kernel/change-feed.js";
import { ownerKey } from "../kernel/owner.js";
import { auditedTransaction } from "../audit/record.js";
import { generatePassword } from "./provider/local/index.js";
import * as repo from "./repo.js";
import { branchesOf } from "./branches-repo.js";
import { awaitCommand, requireHost, sendCommand, supersedeRotations } from "./placement.js";
import {
  checkRecoverable,
  checkRetentionWindow,
  COMMAND_JOB,
  DEFAULT_STORAGE_GB,
  instanceSpec,
  parseTargetTime,
  REMOVAL_GRACE_DAYS,
  SEALED,
  serviceCore,
  type CreateInput,
  type DatabasesDeps,
} from "./service-core.js";
import { settingsOperations } from "./service-settings.js";
import { branchOperations, type BranchOrigin } from "./service-branches.js";
import { idleOperations } from "./idle/operations.js";
import { validateIdleStop } from "./idle/validate.js";

// the service's shared types and constants live in service-core.ts; importers keep using this module
export {
  COMMAND_JOB,
  DEFAULT_STORAGE_GB,
  instanceSpec,
  REMOVAL_GRACE_DAYS,
  SEALED,
  type ComputeSettings,
  type CreateInput,
  type DatabasesDeps,
  type HaAction,
  type Size,
  type StorageSettings,
} from "./service-core.js";

/**
 * Managed PostgreSQL for a caller: every read is within the principal's owner, every change commits
 * with the caller's audit row and, for server work, a command row whose job runs after the commit
 * (the reconciler re-queues it if that send is lost).
 * Here: reads, creation, lifecycle (stop/start/delete/backup/restore) and credentials; the settings
 * operations are in service-settings.ts, the shared machinery in service-core.ts.
 */
export function databasesService(deps: DatabasesDeps) {
  const { db, config, jobs, provider, admission, changes, secrets, hosts, apps } = deps;
  const core = serviceCore(deps);
  const { changed, get, locked, command, requireLive } = core;
  // lists are served from memory until the owner's next change (NOTIFY from a trigger, or this process's own write)
  const lists = new OwnerReadCache<repo.DatabaseRow[]>(changes);

  const list = (p: Principal, filter: InstanceFilter) =>
    lists.get(ownerKey(p.owner), filter === null ? "*" : filter.join(","), () =>
      repo.listDatabases(db, p.owner, filter),
    );

  async function detail(p: Principal, ref: string) {
    const row = await get(p, ref);
    return { row, backups: await repo.recentBackups(db, row.id), commands: await repo.recentCommands(db, row.id) };
  }

  const backups = (p: Principal, limit: number) => repo.backupsOf(db, p.owner, limit);

  /**
   * A new instance; with `origin`, a branch: a copy of the parent (same major version, database and owner role names,
   * same host, since the copy is made from its files), checked against the parent locked in the same transaction.
   */
  async function create(p: Principal, input: CreateInput, origin?: BranchOrigin) {
    const slug = input.slug ?? input.name;
    if (!/^[a-z0-9][a-z0-9-]{1,38}[a-z0-9]$/.test(slug))
      throw badRequest(
        "bad_slug",
        "slug must be 3-40 lowercase letters, digits and hyphens, not starting or ending with a hyphen.",
      );
    const size = input.size ?? "dev";
    validateIdleStop(input.idle_stop_seconds, size, deps.idleMinSeconds ?? 60);
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
      version: origin?.parent.version ?? input.version ?? 17,
      size,
      storage_gb: input.storage_gb ?? DEFAULT_STORAGE_GB[size],
      pitr_retention_days: input.pitr_retention_days ?? 7,
      desired_state: "running",
      state: "creating",
      status_reason: null,
      db_name: origin?.parent.db_name ?? ident,
      db_user: origin?.parent.db_user ?? ident,
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
      parent_id: origin?.parent.id ?? null,
      branch_target: origin?.target ?? null,
      idle_stop_seconds: input.idle_stop_seconds ?? null,
    };
    row.host_id = origin ? origin.parent.host_id : await hosts.place(db, { kind: "database", owner: p.owner, size });
    // on another host (this process has no worker role) the reservation is that host's first command
    const here = row.host_id === hosts.local.id;
    const commandId = randomUUID();
    let made: { row: repo.DatabaseRow; commandId: string };
    try {
      // the row (with the passwords this answer shows) is the transaction's result: a retry of its Idempotency-Key
      // after a crash answers this instance, not a new one (http/idempotent-change.ts)
      made = await auditedTransaction(db, p, async (tx) => {
        if (origin) await origin.check(tx);
        await admission.admit(tx, {
          owner: p.owner,
          accountId: p.accountId,
          kind: "database",
          size,
          storageGb: row.storage_gb,
        });
        // the passwords are kept sealed until the one-time reveal; this call's answer shows them from memory. The
        // owner's is also kept as the current one for attached apps (attachments.ts), replaced by each rotation
        await repo.insertDatabase(tx, {
          ...row,
          initial_password: secrets.seal(row.initial_password!, SEALED.password),
          initial_superuser_password: secrets.seal(row.initial_superuser_password!, SEALED.superuserPassword),
          app_password: secrets.seal(row.initial_password!, SEALED.appPassword),
        });
        if (!here) {
          await repo.insertCommand(tx, { id: commandId, databaseId: row.id, kind: "reserve", params: {} });
          return { row: { ...row }, commandId };
        }
        // capacity (ports, disk, instance limit) is known now, so a refusal is a 503 at creation, not a failed instance
        // later (ProviderError maps itself: capacity → provision_failed)
        const endpoint = await provider.reserve(instanceSpec(row, config, secrets));
        row.host = endpoint.host;
        row.port = endpoint.port;
        await repo.updateDatabase(tx, row.id, { host: endpoint.host, port: endpoint.port });
        const kind = origin ? "branch" : "provision";
        await repo.insertCommand(tx, { id: commandId, databaseId: row.id, kind, params: {} });
        return { row: { ...row }, commandId };
      });
    } catch (err) {
      if (isUniqueViolation(err, "databases_slug_live"))
        throw new ApiError("slug_taken", `The slug "${slug}" is in use.`);
      throw err;
    }
    changed(p);
    await sendCommand(db, jobs, COMMAND_JOB, made.commandId).catch(() => {});
    if (made.row.host_id !== hosts.local.id && !made.row.port)
      Object.assign(made.row, await awaitReservation(made.row, made.commandId));
    return made;
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

  const stop = (p: Principal, ref: string) =>
    command(p, ref, (row) => {
      if (row.size !== "dev")
        throw badRequest("stop_not_supported", "Only dev databases can be stopped; basic and above are always on.");
      // an idle-stopped one becomes stopped by its owner: no connection starts it any more
      if (row.state !== "running" && row.state !== "idle_stopped")
        throw badRequest("not_running", `The database is ${row.state}, not running.`);
      return { kind: "stop", patch: { desired_state: "paused", status_reason: null } };
    });

  const start = (p: Principal, ref: string) =>
    command(p, ref, (row) => {
      // an idle-stopped one may be started ahead of its next connection, as a paused one
      if (row.state !== "paused" && row.state !== "idle_stopped")
        throw badRequest("not_stopped", `The database is ${row.state}, not stopped.`);
      return { kind: "start", patch: { desired_state: "running", status_reason: null } };
    });

  // like Neon, a database with branches is not deleted from under them: the branches go first (README, "Branches")
  const remove = (p: Principal, ref: string) =>
    command(p, ref, async (row, tx) => {
      requireLive(row);
      const branches = await branchesOf(tx, row.id);
      if (branches.length)
        throw new ApiError(
          "has_branches",
          `The database has ${branches.length} branch(es): ${branches.map((b) => b.slug).join(", ")}. Delete them first.`,
        );
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
      const target = targetTime === undefined ? undefined : parseTargetTime(targetTime);
      if (target) checkRetentionWindow(row, target);
      if (!deps.restoreEnabled)
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
      if (target) await checkRecoverable(tx, row, target);
      return {
        kind: "restore",
        params: { target_time: target?.toISOString() ?? null, from_state: row.state },
        patch: { desired_state: "running", state: "creating", removed_at: null },
      };
    });

  /**
   * The new password is returned once; the job applies it (and keeps it sealed for attached apps in the same
   * transaction that records the command's success), and this call waits so the old one is refused when it
   * answers. Then the attached apps are rolled with the new URL (`apps_restarting`): only after the rotation
   * is committed, so a failure there never undoes it; it is retried by a `refresh_apps` command of its own.
   */
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
    // nothing past this point may fail the call: the user must see the password now in force
    const appsRestarting = await apps.attachments.refresh(db, "databases", row.id).catch(async () => {
      const retry = randomUUID();
      await repo
        .insertCommand(db, { id: retry, databaseId: row.id, kind: "refresh_apps", params: {} })
        .then(() => sendCommand(db, jobs, COMMAND_JOB, retry))
        .catch(() => {}); // pods started later resolve the current password anyway
      return [] as string[];
    });
    return { row, commandId, password, appsRestarting };
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
    ...branchOperations(deps, core, create),
    stop,
    start,
    remove,
    backup,
    restore,
    rotatePassword,
    ...settingsOperations(deps, core),
    ...idleOperations(deps, core),
    revealInitialCredentials,
  };
}

export type DatabasesService = ReturnType<typeof databasesService>;
