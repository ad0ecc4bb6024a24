import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { readFile, rename, writeFile } from "node:fs/promises";
import type { InstanceSpec } from "../types.js";
import type { InstanceLayout, NodeName } from "./layout.js";

/** The provider's own memory of an instance: what reality should look like, kept beside the data. */
export interface InstanceRecord extends Pick<
  InstanceSpec,
  "id" | "version" | "size" | "storageGb" | "database" | "user"
> {
  superuser: string;
  host: string;
  /** The front port: whichever node is primary listens here, so URLs survive a switchover. */
  port: number;
  hostnames: string[];
  allowlist: string[];
  primaryNode: NodeName;
  provisioned: boolean;
  removed: boolean;
  walSegmentBytes: number;
  readOnlyReason: string | null;
  standby: { node: NodeName; port: number } | null;
  pool: { port: number } | null;
  /** Present while a switchover is in flight; its phase tells a retry where to continue. */
  switchover: { phase: "stopping_old_primary" | "promoting" | "rebuilding"; from: NodeName; to: NodeName } | null;
  restoredFrom: { instanceId: string; backupId: string; targetTime: string | null } | null;
  /** A branch: the instance it copies and the moment its data is from (branch.ts). */
  branchedFrom?: { instanceId: string; at: string; method: "live" | "recovery" } | null;
  createdAt: string;
}

/** Credentials the platform itself uses; never shown to customers. */
export interface InstanceSecrets {
  adminPassword: string;
  replicationPassword: string;
  /** PgBouncer admin console (RELOAD, SHOW); created with the first pool. */
  poolAdminPassword?: string;
  /** SCRAM verifiers of customer roles set after provisioning: a recovery re-applies them, so a rotated password never comes back. */
  roleVerifiers?: Record<string, string>;
}

export const ADMIN_ROLE = "platform_admin";
export const REPLICATION_ROLE = "platform_replicator";
export const CUSTOMER_SUPERUSER = "postgres";
export const POOL_ADMIN_ROLE = "platform_pool_admin";

/**
 * The customer's "superuser" is deliberately not a PostgreSQL superuser: every instance on a host runs
 * as the same OS user, so a true superuser (COPY … FROM PROGRAM, pg_read_file, ALTER SYSTEM) could read
 * or stop other tenants' servers. It gets everything short of that: roles, databases, all data,
 * monitoring, and it can act as the owner. Only the platform's own role is a real superuser.
 */
export const CUSTOMER_SUPERUSER_ATTRS = "LOGIN NOSUPERUSER CREATEDB CREATEROLE BYPASSRLS";
export const CUSTOMER_SUPERUSER_GRANTS = [
  "pg_read_all_data",
  "pg_write_all_data",
  "pg_monitor",
  "pg_signal_backend",
  "pg_read_all_settings",
  "pg_checkpoint",
];

export async function readRecord(layout: InstanceLayout): Promise<InstanceRecord | null> {
  if (!existsSync(layout.recordFile)) return null;
  return JSON.parse(await readFile(layout.recordFile, "utf8")) as InstanceRecord;
}

/** Write-then-rename so a kill -9 leaves either the old or the new record, never half of one. */
async function atomicWrite(file: string, text: string): Promise<void> {
  const tmp = `${file}.tmp-${process.pid}`;
  await writeFile(tmp, text, { mode: 0o600 });
  await rename(tmp, file);
}

export async function saveRecord(layout: InstanceLayout, record: InstanceRecord): Promise<void> {
  await atomicWrite(layout.recordFile, JSON.stringify(record, null, 2) + "\n");
}

export async function readSecrets(layout: InstanceLayout): Promise<InstanceSecrets> {
  return JSON.parse(await readFile(layout.secretsFile, "utf8")) as InstanceSecrets;
}

export async function saveSecrets(layout: InstanceLayout, secrets: InstanceSecrets): Promise<void> {
  await atomicWrite(layout.secretsFile, JSON.stringify(secrets) + "\n");
}

export function generatePassword(bytes = 24): string {
  return randomBytes(bytes).toString("base64url");
}
