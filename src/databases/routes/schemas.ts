import { Type } from "@sinclair/typebox";
import type { FastifyRequest } from "fastify";
import type { Principal } from "../../auth/principal.js";
import type { Config } from "../../config/config.js";
import { Nullable, Timestamp } from "../../http/schemas.js";
import type { DatabasesService } from "../service.js";

/** What every databases route file gets from the module. */
export interface RouteDeps {
  svc: DatabasesService;
  config: Pick<Config, "baseDomain" | "internalDomain">;
}

export const tags = ["databases"];
export const read = { scope: "databases:read", instance: { param: "id" } } as const;
export const write = { scope: "databases:write", instance: { param: "id" } } as const;

/** The authenticated caller; every route here declares auth, so it is always there. */
export const caller = (request: FastifyRequest): Principal => request.principal!;

export { SLUG, Size } from "../schemas.js";
export const Params = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64, description: "id or slug" }) });
export const Accepted = Type.Object({ command_id: Type.String() });
export const Backup = Type.Object({
  id: Type.String(),
  kind: Type.String(),
  label: Nullable(Type.String()),
  status: Type.String(),
  size_bytes: Type.Integer(),
  started_at: Nullable(Timestamp),
  finished_at: Nullable(Timestamp),
  start_lsn: Nullable(Type.String()),
  stop_lsn: Nullable(Type.String()),
  database_id: Type.String(),
});
export const Command = Type.Object({
  id: Type.String(),
  kind: Type.String(),
  status: Type.String(),
  error: Nullable(Type.String()),
  created_at: Timestamp,
  finished_at: Nullable(Timestamp),
});
/** The watcher's last check (beyond the spec): WAL continuity since the newest base backup, and backup checksums. */
export const BackupHealth = Type.Object({
  ok: Type.Boolean(),
  problem: Nullable(Type.String()),
  base_backup_id: Nullable(Type.String()),
  timeline: Nullable(Type.Integer()),
  from_segment: Nullable(Type.String()),
  to_segment: Nullable(Type.String()),
  checked_segments: Type.Integer(),
  missing_segments: Type.Array(Type.String()),
  pending_segments: Type.Array(Type.String()),
  archiver_failure: Nullable(Type.Object({ wal: Type.String(), at: Type.String() })),
  corrupt_backups: Type.Array(Type.String()),
  checked_at: Timestamp,
});
export const Instance = Type.Object({
  id: Type.String(),
  name: Type.String(),
  slug: Type.String(),
  label: Nullable(Type.String()),
  engine: Type.String(),
  version: Type.Integer(),
  size: Type.String(),
  storage_gb: Type.Integer(),
  pitr_retention_days: Type.Integer(),
  state: Type.String({
    description:
      "creating, running, paused (stopped by its owner), idle_stopped (stopped after idle_stop_seconds without connections: the next connection starts it), removed, failed",
  }),
  desired_state: Type.String(),
  status_reason: Nullable(Type.String()),
  public_host: Type.String(),
  internal_host: Type.String(),
  host: Type.String(),
  port: Type.Integer(),
  database: Type.String(),
  user: Type.String(),
  database_url: Type.String(),
  database_url_public: Type.String(),
  allowlist: Type.Array(Type.Object({ cidr: Type.String(), label: Type.String() })),
  ha_enabled: Type.Boolean(),
  pool_enabled: Type.Boolean(),
  idle_stop_seconds: Nullable(
    Type.Integer({
      description:
        "dev only: stopped (state idle_stopped) after this many seconds without client connections; the next connection starts it. null: never",
    }),
  ),
  extensions: Type.Array(Type.String()),
  compute: Type.Record(Type.String(), Type.Unknown()),
  storage: Type.Record(Type.String(), Type.Unknown()),
  authorized_clients: Type.Array(Type.String()),
  created_at: Timestamp,
  removed_at: Nullable(Timestamp),
  parent_id: Nullable(
    Type.String({ description: "a branch's parent database; null for a database that is no branch" }),
  ),
  branched_at: Nullable(Timestamp),
  backup_health: Type.Optional(Nullable(BackupHealth)),
  storage_used_bytes: Type.Optional(Nullable(Type.Integer())),
  password: Type.Optional(Type.String()),
  superuser_password: Type.Optional(Type.String()),
  superuser_database_url: Type.Optional(Type.String()),
  backups: Type.Optional(Type.Array(Backup)),
  commands: Type.Optional(Type.Array(Command)),
});
export const InstanceWithCommand = Type.Composite([Instance, Type.Object({ command_id: Type.String() })]);
/** An app using the database, as the apps area reports it (kernel AttachedApp). */
export const AttachedApp = Type.Object({
  kind: Type.String({ description: "pod, pod-group…" }),
  id: Type.String(),
  name: Type.String(),
  slug: Nullable(Type.String()),
  state: Type.String(),
});
