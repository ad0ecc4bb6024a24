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
import type pg from "pg";
import { ident, literal } from "./admin.js";
import { directorySize } from "./backup.js";
import type { InstanceContext } from "./context.js";
import { ensureRole } from "./credentials.js";
import { DEFAULT_EXTENSIONS, installExtensions } from "./extensions.js";
import { normalizeCidrs } from "./hba.js";
import { ID_RE, type ProviderHost } from "./host.js";
import type { NodeName } from "./layout.js";
import { waitFor } from "./exec.js";
import { stopPool } from "./pool.js";
import { poolStatusOf, startPoolFor } from "./pooling.js";
import {
  ADMIN_ROLE,
  CUSTOMER_SUPERUSER,
  CUSTOMER_SUPERUSER_ATTRS,
  CUSTOMER_SUPERUSER_GRANTS,
  POOL_ADMIN_ROLE,
  REPLICATION_ROLE,
  generatePassword,
  readRecord,
  saveRecord,
  saveSecrets,
  type InstanceRecord,
} from "./record.js";
import { continuity } from "./retention.js";
import { SPARE_DATABASE, SPARE_TLS_DIR, SparePool } from "./spares.js";
import { scramVerifier } from "./scram.js";
import { buildStandby, standbyStatus, switchover } from "./standby.js";
import { ensureCertificate, isValidHostname } from "./tls.js";

/** Creating an instance, starting and stopping its servers, removing it. */

/** how long a start waits for its port to be given up (by a wake front) before it counts as taken */
const PORT_RELEASE_WAIT_MS = 5_000;

const NAME_RE = /^[a-z_][a-z0-9_]{0,62}$/;
const RESERVED_ROLES = new Set([
  ADMIN_ROLE,
  REPLICATION_ROLE,
  POOL_ADMIN_ROLE,
  CUSTOMER_SUPERUSER,
  "public",
  "pgbouncer",
]);

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
  try {
    return await host.serial(spec.id, async () => {
      const ctx = await host.load(spec.id);
      if (ctx.record.provisioned) {
        // a finished provision is never redone: passwords may have been rotated since
        await startAll(ctx);
        return ctx.endpoint();
      }
      await host.prepareDirs(ctx, { certificate: false });
      await adoptSpare(host.spares, ctx);
      await ensureCertificate(
        ctx.layout.tlsDir,
        ctx.record.hostnames[0] ?? "localhost",
        ctx.record.hostnames,
        host.runAs,
      );
      // initCluster wipes and redoes a directory a crash left half-initialised (and keeps an adopted spare)
      await initCluster(ctx.primary, { superuser: ADMIN_ROLE, password: ctx.secrets.adminPassword });
      await ctx.writeNodeConfig(ctx.primaryNode);
      await startNode(ctx, ctx.primaryNode);
      const prepared = await ctx.withPrimary(async (c) => {
        const dbs = await c.query<{ datname: string }>("SELECT datname FROM pg_database WHERE datname = ANY($1)", [
          [SPARE_DATABASE, spec.database],
        ]);
        const names = new Set(dbs.rows.map((r) => r.datname));
        ctx.record.walSegmentBytes = Number(
          (await c.query<{ s: string }>("SELECT setting AS s FROM pg_settings WHERE name = 'wal_segment_size'")).rows[0]
            .s,
        );
        if (names.has(SPARE_DATABASE) && !names.has(spec.database)) {
          await adoptPreparedSpare(c, spec, ctx.secrets.replicationPassword);
          return true;
        }
        await ensureRole(c, spec.user, "LOGIN", spec.password);
        await ensureRole(c, CUSTOMER_SUPERUSER, CUSTOMER_SUPERUSER_ATTRS, spec.superuserPassword);
        await c.query(
          `GRANT ${CUSTOMER_SUPERUSER_GRANTS.join(", ")}, ${ident(spec.user)} TO ${ident(CUSTOMER_SUPERUSER)}`,
        );
        await ensureRole(c, REPLICATION_ROLE, "REPLICATION LOGIN", ctx.secrets.replicationPassword);
        if (!names.has(spec.database))
          await c.query(`CREATE DATABASE ${ident(spec.database)} OWNER ${ident(spec.user)}`);
        return false;
      });
      // a prepared spare's database has the default extensions already
      if (!prepared) await installExtensions(ctx, DEFAULT_EXTENSIONS);
      ctx.record.provisioned = true;
      await ctx.save();
      return ctx.endpoint();
    });
  } finally {
    // the replacement is built once this creation is done, not while its server starts on the same cores
    host.spares.refill(spec.version);
  }
}

/**
 * A prepared spare (spares.ts) made this customer's, in one implicit transaction (a kill leaves all of it or none):
 * the owner role, the passwords, the database renamed and handed to the owner.
 */
async function adoptPreparedSpare(c: pg.Client, spec: InstanceSpec, replicationPassword: string): Promise<void> {
  const verifier = (password: string) => literal(scramVerifier(password) ?? password);
  await c.query(
    `CREATE ROLE ${ident(spec.user)} WITH LOGIN PASSWORD ${verifier(spec.password)};
     ALTER ROLE ${ident(CUSTOMER_SUPERUSER)} WITH ${CUSTOMER_SUPERUSER_ATTRS} PASSWORD ${verifier(spec.superuserPassword)};
     GRANT ${ident(spec.user)} TO ${ident(CUSTOMER_SUPERUSER)};
     ALTER ROLE ${ident(REPLICATION_ROLE)} WITH REPLICATION LOGIN PASSWORD ${verifier(replicationPassword)};
     ALTER DATABASE ${ident(SPARE_DATABASE)} RENAME TO ${ident(spec.database)};
     ALTER DATABASE ${ident(spec.database)} OWNER TO ${ident(spec.user)};`,
  );
}

/**
 * Takes an initialised data directory from the warm pool instead of running initdb. Each step can be
 * interrupted and redone: claim (rename into the instance), adopt its admin password into the
 * secrets, its certificate (an instance without host names), then move its data into place; the
 * replacement spare is built once the provision is over.
 */
async function adoptSpare(spares: SparePool, ctx: InstanceContext): Promise<void> {
  const dataDir = ctx.primary.dataDir;
  const claimed = path.join(ctx.layout.instanceDir, "spare");
  const initialised = existsSync(path.join(dataDir, "PG_VERSION")) && existsSync(path.join(dataDir, PLATFORM_CONF));
  if (!initialised && !existsSync(claimed)) await spares.claim(ctx.record.version, claimed);
  if (existsSync(path.join(claimed, "data"))) {
    const password = await SparePool.passwordOf(claimed);
    if (ctx.secrets.adminPassword !== password) {
      ctx.secrets.adminPassword = password;
      await saveSecrets(ctx.layout, ctx.secrets);
    }
    const tls = path.join(claimed, SPARE_TLS_DIR);
    if (ctx.record.hostnames.length === 0 && existsSync(tls) && !existsSync(ctx.layout.tlsDir))
      await rename(tls, ctx.layout.tlsDir);
    await rm(dataDir, { recursive: true, force: true }); // whatever a crashed initdb left
    await rename(path.join(claimed, "data"), dataDir);
  }
  await rm(claimed, { recursive: true, force: true });
}

async function startNode(ctx: InstanceContext, node: NodeName): Promise<void> {
  const cluster = ctx.cluster(node);
  if (await isRunning(cluster)) return;
  const port = ctx.nodePort(node);
  // a wake front (wake-front.ts) of another platform process of this host gives the port up within a second or
  // two of seeing the start (its sync loop): waited for, before the port counts as taken
  const free = async () => ((await portInUse(port)) ? undefined : true);
  await waitFor(
    free,
    PORT_RELEASE_WAIT_MS,
    () => new ProviderError("port_taken", `port ${port} of database ${ctx.record.id} is taken by another process`),
    100,
  );
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
