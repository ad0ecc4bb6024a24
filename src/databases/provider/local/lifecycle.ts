import { existsSync } from "node:fs";
import { mkdir, rename, rm } from "node:fs/promises";
import path from "node:path";
import {
  PLATFORM_CONF,
  initCluster,
  isRunning,
  portInUse,
  startCluster,
  stopCluster,
} from "../../../pgserver/cluster.js";
import { DB_SIZES, ProviderError, type Endpoint, type InstanceSpec, type InstanceStatus } from "../types.js";
import { ident } from "./admin.js";
import { directorySize } from "./backup.js";
import type { InstanceContext } from "./context.js";
import { ensureRole } from "./credentials.js";
import { DEFAULT_EXTENSIONS, installExtensions } from "./extensions.js";
import { normalizeCidrs } from "./hba.js";
import { ID_RE, type ProviderHost } from "./host.js";
import type { NodeName } from "./layout.js";
import { stopPool } from "./pool.js";
import { poolStatusOf, startPoolFor } from "./pooling.js";
import {
  ADMIN_ROLE,
  CUSTOMER_SUPERUSER,
  POOL_ADMIN_ROLE,
  REPLICATION_ROLE,
  generatePassword,
  readRecord,
  saveRecord,
  saveSecrets,
  type InstanceRecord,
} from "./record.js";
import { continuity } from "./retention.js";
import { SparePool } from "./spares.js";
import { buildStandby, standbyStatus, switchover } from "./standby.js";
import { isValidHostname } from "./tls.js";

/** Creating an instance, starting and stopping its servers, removing it. */

const NAME_RE = /^[a-z_][a-z0-9_]{0,62}$/;
const RESERVED_ROLES = new Set([
  ADMIN_ROLE,
  REPLICATION_ROLE,
  POOL_ADMIN_ROLE,
  CUSTOMER_SUPERUSER,
  "public",
  "pgbouncer",
]);

/**
 * The customer's "superuser" is deliberately not a PostgreSQL superuser: every instance on a host runs
 * as the same OS user, so a true superuser (COPY … FROM PROGRAM, pg_read_file, ALTER SYSTEM) could read
 * or stop other tenants' servers. It gets everything short of that: roles, databases, all data,
 * monitoring, and it can act as the owner. Only the platform's own role is a real superuser.
 */
const CUSTOMER_SUPERUSER_ATTRS = "LOGIN NOSUPERUSER CREATEDB CREATEROLE BYPASSRLS";
const CUSTOMER_SUPERUSER_GRANTS = [
  "pg_read_all_data",
  "pg_write_all_data",
  "pg_monitor",
  "pg_signal_backend",
  "pg_read_all_settings",
  "pg_checkpoint",
];

export function validateSpec(spec: InstanceSpec): void {
  const bad = (msg: string) => {
    throw new ProviderError("bad_spec", msg);
  };
  if (!ID_RE.test(spec.id)) bad(`invalid instance id: ${spec.id}`);
  if (spec.version !== 16 && spec.version !== 17) bad(`PostgreSQL ${spec.version} is not offered (16 or 17)`);
  if (!DB_SIZES.includes(spec.size)) bad(`unknown size ${spec.size}`);
  if (!(spec.storageGb > 0)) bad("storage_gb must be positive");
  if (
    !NAME_RE.test(spec.database) ||
    spec.database.startsWith("pg_") ||
    ["postgres", "template0", "template1", "pgbouncer"].includes(spec.database)
  )
    bad(`invalid database name: ${spec.database}`);
  if (!NAME_RE.test(spec.user) || spec.user.startsWith("pg_") || RESERVED_ROLES.has(spec.user))
    bad(`invalid user name: ${spec.user}`);
  if ((spec.password ?? "").length < 8 || (spec.superuserPassword ?? "").length < 8)
    bad("passwords must have at least 8 characters");
  for (const h of spec.hostnames ?? []) if (!isValidHostname(h)) bad(`invalid hostname: ${h}`);
}

function endpointOf(r: InstanceRecord): Endpoint {
  return { host: r.host, port: r.port, database: r.database, user: r.user, superuser: r.superuser, sslmode: "require" };
}

/** Claims a port and writes the record (and secrets) once; a second call returns the same endpoint. */
export async function reserve(host: ProviderHost, spec: InstanceSpec): Promise<Endpoint> {
  validateSpec(spec);
  const layout = host.layout(spec.id);
  return host.allocating(async () => {
    const existing = await readRecord(layout);
    if (existing) return endpointOf(existing);
    await host.checkCapacity();
    const port = await host.allocatePort();
    await mkdir(layout.instanceDir, { recursive: true, mode: 0o711 });
    // secrets before the record: a record always has its secrets
    await saveSecrets(layout, { adminPassword: generatePassword(), replicationPassword: generatePassword() });
    const record: InstanceRecord = {
      id: spec.id,
      version: spec.version,
      size: spec.size,
      storageGb: spec.storageGb,
      database: spec.database,
      user: spec.user,
      superuser: CUSTOMER_SUPERUSER,
      host: "127.0.0.1",
      port,
      hostnames: spec.hostnames ?? [],
      allowlist: normalizeCidrs(spec.allowlist ?? []),
      primaryNode: "a",
      provisioned: false,
      removed: false,
      walSegmentBytes: 16 * 2 ** 20,
      readOnlyReason: null,
      standby: null,
      pool: null,
      switchover: null,
      restoredFrom: null,
      createdAt: new Date().toISOString(),
    };
    await saveRecord(layout, record);
    return endpointOf(record);
  });
}

export async function provision(host: ProviderHost, spec: InstanceSpec): Promise<Endpoint> {
  validateSpec(spec);
  await reserve(host, spec);
  return host.serial(spec.id, async () => {
    const ctx = await host.load(spec.id);
    if (ctx.record.provisioned) {
      // a finished provision is never redone: passwords may have been rotated since
      await startAll(ctx);
      return ctx.endpoint();
    }
    await host.prepareDirs(ctx);
    await adoptSpare(host.spares, ctx);
    // initCluster wipes and redoes a directory a crash left half-initialised (and keeps an adopted spare)
    await initCluster(ctx.primary, { superuser: ADMIN_ROLE, password: ctx.secrets.adminPassword });
    await ctx.writeNodeConfig(ctx.primaryNode);
    await startNode(ctx, ctx.primaryNode);
    await ctx.withPrimary(async (c) => {
      ctx.record.walSegmentBytes = Number(
        (await c.query<{ s: string }>("SELECT setting AS s FROM pg_settings WHERE name = 'wal_segment_size'")).rows[0]
          .s,
      );
      await ensureRole(c, spec.user, "LOGIN", spec.password);
      await ensureRole(c, CUSTOMER_SUPERUSER, CUSTOMER_SUPERUSER_ATTRS, spec.superuserPassword);
      await c.query(
        `GRANT ${CUSTOMER_SUPERUSER_GRANTS.join(", ")}, ${ident(spec.user)} TO ${ident(CUSTOMER_SUPERUSER)}`,
      );
      await ensureRole(c, REPLICATION_ROLE, "REPLICATION LOGIN", ctx.secrets.replicationPassword);
      const exists = await c.query("SELECT 1 FROM pg_database WHERE datname = $1", [spec.database]);
      if (!exists.rowCount) await c.query(`CREATE DATABASE ${ident(spec.database)} OWNER ${ident(spec.user)}`);
    });
    await installExtensions(ctx, DEFAULT_EXTENSIONS);
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
async function adoptSpare(spares: SparePool, ctx: InstanceContext): Promise<void> {
  const dataDir = ctx.primary.dataDir;
  const claimed = path.join(ctx.layout.instanceDir, "spare");
  const initialised = existsSync(path.join(dataDir, "PG_VERSION")) && existsSync(path.join(dataDir, PLATFORM_CONF));
  if (!initialised && !existsSync(claimed)) await spares.claim(ctx.record.version, claimed);
  spares.refill(ctx.record.version);
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

async function startNode(ctx: InstanceContext, node: NodeName): Promise<void> {
  const cluster = ctx.cluster(node);
  if (await isRunning(cluster)) return;
  const port = ctx.nodePort(node);
  if (await portInUse(port))
    throw new ProviderError("port_taken", `port ${port} of database ${ctx.record.id} is taken by another process`);
  try {
    await startCluster(cluster, 300);
  } catch (err) {
    throw new ProviderError("start_failed", (err as Error).message);
  }
}

/** Everything the record says should run: primary, standby, pool (and an interrupted switchover finished first). */
async function startAll(ctx: InstanceContext): Promise<void> {
  if (ctx.record.switchover) await switchover(ctx);
  await ctx.writeNodeConfig(ctx.primaryNode);
  await startNode(ctx, ctx.primaryNode);
  const sb = ctx.standbyNode();
  if (sb) {
    if (existsSync(path.join(ctx.layout.nodeDir(sb), "PG_VERSION"))) {
      await ctx.writeNodeConfig(sb);
      await startNode(ctx, sb);
    } else {
      await buildStandby(ctx);
    }
  }
  if (ctx.record.pool) await startPoolFor(ctx);
}

export async function stopAll(ctx: InstanceContext): Promise<void> {
  if (await isRunning(ctx.primary)) {
    // close the current WAL segment so the archive holds every change made before the stop
    await ctx.withPrimary((c) => c.query("SELECT pg_switch_wal()")).catch(() => {});
  }
  await stopPool(ctx.layout.poolDir);
  const sb = ctx.standbyNode();
  if (sb) await stopCluster(ctx.cluster(sb), "fast");
  await stopCluster(ctx.primary, "fast");
}

export async function start(ctx: InstanceContext): Promise<void> {
  if (!ctx.record.provisioned)
    throw new ProviderError("not_provisioned", `database ${ctx.record.id} has not finished provisioning`);
  await startAll(ctx);
  if (ctx.record.removed) {
    ctx.record.removed = false;
    await ctx.save();
  }
}

/** Stops everything but keeps data and backups: start brings it back, purge deletes it. */
export async function remove(ctx: InstanceContext): Promise<void> {
  await stopAll(ctx);
  ctx.record.removed = true;
  await ctx.save();
}

/** Deletes everything of the instance, also what a half-done reserve or a broken record left. */
export async function purge(host: ProviderHost, id: string): Promise<void> {
  const layout = host.layout(id);
  const ctx = await host.load(id).catch(() => null);
  if (ctx) {
    await stopPool(layout.poolDir);
    for (const node of ["a", "b"] as const) await stopCluster(ctx.cluster(node), "immediate").catch(() => {});
  }
  await rm(layout.instanceDir, { recursive: true, force: true });
  await rm(layout.backupRoot, { recursive: true, force: true });
  await rm(layout.socketDir, { recursive: true, force: true });
}

export async function instanceStatus(ctx: InstanceContext): Promise<InstanceStatus> {
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
    walContinuity: rec.provisioned ? await continuity(ctx, running).catch(() => null) : null,
    standby: rec.standby ? await standbyStatus(ctx).catch(() => null) : null,
    pool: rec.pool ? await poolStatusOf(ctx) : null,
    pendingSwitchover: rec.switchover !== null,
  };
}
