import { randomUUID } from "node:crypto";
import type pg from "pg";
import type { Static } from "@sinclair/typebox";
import type { Config } from "../config/config.js";
import type { Db } from "../store/db.js";
import { ApiError, badRequest, found } from "../http/errors.js";
import type { JobQueue } from "../jobs/queue.js";
import type { Kernel } from "../kernel/kernel.js";
import type { Principal } from "../auth/principal.js";
import type { OwnerChangeFeed } from "../kernel/change-feed.js";
import { ownerKey } from "../kernel/owner.js";
import type { SecretBox } from "../kernel/secrets.js";
import { auditedTransaction } from "../audit/record.js";
import type { DatabaseProvider, InstanceSpec } from "./provider/types.js";
import { generatePassword } from "./provider/local/index.js";
import * as repo from "./repo.js";
import type { Hosts } from "../hosts/contract.js";
import type { AttachmentConsumer } from "../apps/contract.js";
import { sendCommand } from "./placement.js";
import type { ComputeBody, CreateBody, StorageBody } from "./schemas.js";

/*
 * What every part of the databases service shares: its dependencies, constants and types, and the machinery
 * each operation is built on (lookups within the caller's owner, audited commands and updates). The operations
 * live in service.ts (lifecycle, restore, credentials) and service-settings.ts, composed there into one object.
 */

export const DEFAULT_STORAGE_GB = { dev: 10, basic: 50, pro: 100, business: 500 } as const;
export const REMOVAL_GRACE_DAYS = 7;
export const COMMAND_JOB = "databases.command";

export interface DatabasesDeps {
  db: Db;
  config: Pick<Config, "baseDomain" | "internalDomain">;
  /** DB_RESTORE_ENABLED (the area's own setting): restores are performed, not answered 501 restore_not_ready */
  restoreEnabled: boolean;
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
  /** the apps side of attachments (attached-apps, rolling apps after a rotation): the kernel, read at each call */
  apps: { readonly attachments: AttachmentConsumer };
  /** DB_IDLE_MIN_SECONDS: the shortest idle_stop_seconds accepted (scale-to-zero, src/databases/idle) */
  idleMinSeconds?: number;
}

export type Size = repo.DatabaseRow["size"];

export type CreateInput = Static<typeof CreateBody>;
export type ComputeSettings = Static<typeof ComputeBody>;
export type StorageSettings = Static<typeof StorageBody>;
export type HaAction = "ha_enable" | "ha_disable" | "ha_rebuild" | "ha_switchover";

/** What a mutation decided after checking the locked row: the command to record and the row's new intent. */
type Intent = { kind: string; params?: Record<string, unknown>; patch?: Partial<repo.DatabaseRow> };

/** Columns sealed at rest (kernel/secrets.ts); the name is bound into each ciphertext. */
export const SEALED = {
  password: "databases.initial_password",
  superuserPassword: "databases.initial_superuser_password",
  commandPassword: "database_commands.params.password",
  /** the owner role's current password, for attached apps (attachments.ts) */
  appPassword: "databases.app_password",
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

/** A restore's or branch's target moment: RFC 3339 (`bad_time`), not in the future (`future_time`). */
export function parseTargetTime(text: string): Date {
  const rfc3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;
  const target = new Date(text);
  if (!rfc3339.test(text) || Number.isNaN(target.getTime()))
    throw badRequest("bad_time", "The target time must be an RFC 3339 timestamp, e.g. 2026-01-02T03:04:05Z.");
  if (target.getTime() > Date.now()) throw badRequest("future_time", "The target time is in the future.");
  return target;
}

/** The moment lies within the instance's retention window (`out_of_retention`), which starts no earlier than its creation. */
export function checkRetentionWindow(row: repo.DatabaseRow, target: Date): void {
  const oldest = Math.max(Date.now() - row.pitr_retention_days * 86_400_000, row.created_at.getTime());
  if (target.getTime() < oldest)
    throw badRequest(
      "out_of_retention",
      `The target time is outside the ${row.pitr_retention_days}-day retention window of this database.`,
    );
}

/** Recovery starts from a base backup finished before the target: earlier moments cannot be reached (`out_of_retention`). */
export async function checkRecoverable(q: pg.PoolClient, row: repo.DatabaseRow, target: Date): Promise<void> {
  const first = await repo.firstRecoverableAt(q, row.id);
  if (!first || target.getTime() < first.getTime()) {
    throw badRequest(
      "out_of_retention",
      first
        ? `The earliest moment this database can be restored to is ${first.toISOString()} (its first base backup).`
        : "This database has no base backup yet, so no point in time can be restored; try again in a minute.",
    );
  }
}

/** The shared machinery of the service's operations, built once per service from its dependencies. */
export function serviceCore({ db, jobs, changes }: Pick<DatabasesDeps, "db" | "jobs" | "changes">) {
  const changed = (p: Principal) => changes.changed(ownerKey(p.owner));

  async function get(p: Principal, ref: string): Promise<repo.DatabaseRow> {
    return found(await repo.findDatabase(db, p.owner, ref), "database");
  }

  async function locked(tx: pg.PoolClient, p: Principal, ref: string): Promise<repo.DatabaseRow> {
    return found(await repo.findDatabase(tx, p.owner, ref, { forUpdate: true }), "database");
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

  function requireLive(row: repo.DatabaseRow) {
    if (row.state === "removed") throw new ApiError("database_removed", "This database was deleted; restore it first.");
  }

  return { changed, get, locked, command, update, requireLive };
}

export type ServiceCore = ReturnType<typeof serviceCore>;
