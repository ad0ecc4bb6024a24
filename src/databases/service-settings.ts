import { ApiError, badRequest } from "../http/errors.js";
import type { Principal } from "../auth/principal.js";
import type { Queryable } from "../store/db.js";
import type { AttachedApp } from "../apps/contract.js";
import { connectionUrl, DB_SIZES } from "./provider/types.js";
import { ALLOWED_EXTENSIONS, normalizeCidr } from "./provider/local/index.js";
import { statusOnHost } from "./placement.js";
import type { ComputeSettings, DatabasesDeps, HaAction, ServiceCore, Size, StorageSettings } from "./service-core.js";

/**
 * The settings of a database the owner changes after creation: network allowlist, extensions, size, high
 * availability, pooling, autoscaling, label, plus the status reads that go with them. Part of databasesService
 * (service.ts); kept apart because none of it touches the instance's lifecycle.
 */
export function settingsOperations(
  { db, provider, admission, poolAvailable, hosts, apps }: DatabasesDeps,
  { get, command, update, requireLive }: ServiceCore,
) {
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
      if (size !== "dev" && row.idle_stop_seconds)
        throw badRequest(
          "stop_not_supported",
          "Only dev databases stop when idle: set idle_stop_seconds to null (PATCH /v1/databases/{id}) before resizing.",
        );
      await admission.admit(tx, {
        owner: p.owner,
        accountId: p.accountId,
        kind: "database",
        size,
        storageGb: storageGb ?? row.storage_gb,
      });
      return { kind: "resize", params: { size, storage_gb: storageGb ?? row.storage_gb } };
    });

  /** turning a feature on passes admission as an update (organization deploy rules: features.ha, features.pooling) */
  const admitFeature = (tx: Queryable, p: Principal, row: { size: Size; storage_gb: number }, feature: string) =>
    admission.admit(tx, {
      owner: p.owner,
      accountId: p.accountId,
      kind: "database",
      size: row.size,
      storageGb: row.storage_gb,
      update: true,
      features: [feature],
    });

  const ha = (p: Principal, ref: string, action: HaAction) =>
    command(p, ref, async (row, tx) => {
      requireLive(row);
      if (row.size === "dev") throw badRequest("ha_not_supported", "High availability needs size basic or above.");
      if (action !== "ha_enable" && !row.ha_enabled)
        throw badRequest("ha_not_enabled", "High availability is not enabled on this database.");
      if (row.state !== "running") throw badRequest("not_running", `The database is ${row.state}, not running.`);
      if (action === "ha_enable") await admitFeature(tx, p, row, "ha");
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
    command(p, ref, async (row, tx) => {
      requireLive(row);
      if (enabled && !poolAvailable())
        throw new ApiError(
          "pool_unavailable",
          "Connection pooling needs PgBouncer, which is not installed on this platform's hosts.",
        );
      if (enabled) await admitFeature(tx, p, row, "pooling");
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

  /** Apps attached to the database, as the apps area reports them (none without one); 404 for another owner's database. */
  async function attachedApps(p: Principal, ref: string): Promise<AttachedApp[]> {
    const row = await get(p, ref);
    return apps.attachments.attachedTo(db, "databases", row.id);
  }

  return {
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
  };
}
