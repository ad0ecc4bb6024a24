import type { Config } from "../config/config.js";
import { connectionUrl, type Endpoint } from "./provider/types.js";
import type * as repo from "./repo.js";

/** The API shape of an instance; passwords (and URLs carrying them) only where given. */
export function databaseView(
  row: repo.DatabaseRow,
  config: Pick<Config, "baseDomain" | "internalDomain">,
  secrets?: { password?: string; superuser_password?: string },
) {
  const ep: Endpoint = {
    host: row.host ?? "127.0.0.1",
    port: row.port ?? 5432,
    database: row.db_name,
    user: row.db_user,
    superuser: "postgres",
    sslmode: "require",
  };
  const url = connectionUrl(ep, secrets?.password);
  return {
    id: row.id,
    name: row.name,
    slug: row.slug,
    label: row.label,
    engine: row.engine,
    version: row.version,
    size: row.size,
    storage_gb: row.storage_gb,
    pitr_retention_days: row.pitr_retention_days,
    state: row.state,
    desired_state: row.desired_state,
    status_reason: row.status_reason,
    public_host: `${row.slug}.db.${config.baseDomain}`,
    internal_host: `${row.slug}.db.${config.internalDomain}`,
    host: ep.host,
    port: ep.port,
    database: row.db_name,
    user: row.db_user,
    database_url: url,
    database_url_public: url,
    allowlist: row.allowlist,
    ha_enabled: row.ha_enabled,
    pool_enabled: row.pool_enabled,
    idle_stop_seconds: row.idle_stop_seconds ?? null,
    extensions: row.extensions,
    compute: row.compute_autoscale,
    storage: row.storage_autoscale,
    authorized_clients: row.authorized_clients,
    created_at: row.created_at.toISOString(),
    removed_at: row.removed_at?.toISOString() ?? null,
    // a branch: its parent and the moment its data is a copy of (null until the copy is made)
    parent_id: row.parent_id ?? null,
    branched_at: row.branched_at?.toISOString() ?? null,
    backup_health: row.backup_health ?? null,
    storage_used_bytes:
      row.storage_used_bytes === null || row.storage_used_bytes === undefined ? null : Number(row.storage_used_bytes),
    ...(secrets?.password ? { password: secrets.password } : {}),
    ...(secrets?.superuser_password
      ? {
          superuser_password: secrets.superuser_password,
          superuser_database_url: connectionUrl(ep, secrets.superuser_password, "postgres"),
        }
      : {}),
  };
}

export const backupView = (b: repo.BackupRow) => ({
  id: b.id,
  database_id: b.database_id,
  kind: b.kind,
  label: b.label,
  status: b.status,
  size_bytes: b.size_bytes,
  started_at: b.started_at?.toISOString() ?? null,
  finished_at: b.finished_at?.toISOString() ?? null,
  start_lsn: b.start_lsn,
  stop_lsn: b.stop_lsn,
});

export const commandView = (c: repo.CommandRow) => ({
  id: c.id,
  kind: c.kind,
  status: c.status,
  error: c.error,
  created_at: c.created_at.toISOString(),
  finished_at: c.finished_at?.toISOString() ?? null,
});
