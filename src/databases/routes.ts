import { Type } from "@sinclair/typebox";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { FastifyInstance } from "fastify";
import type { AppContext } from "../kernel/context.js";
import type { DatabasesState } from "./module.js";
import { badRequest } from "../http/errors.js";
import { Body, Nullable, Timestamp } from "../http/schemas.js";
import { databasesService, databaseView } from "./service.js";
import { connectionUrl } from "./provider/types.js";
import { findPgbouncer } from "./provider/local/index.js";
import * as repo from "./repo.js";
import { assertCanCreate } from "../billing/metering/admission.js";

const SLUG = "^[a-z0-9][a-z0-9-]{1,38}[a-z0-9]$";
const Size = Type.Union([Type.Literal("dev"), Type.Literal("basic"), Type.Literal("pro"), Type.Literal("business")]);
const Params = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64, description: "id or slug" }) });
const Accepted = Type.Object({ command_id: Type.String() });
const Backup = Type.Object({
  id: Type.String(), kind: Type.String(), label: Nullable(Type.String()), status: Type.String(), size_bytes: Type.Integer(),
  started_at: Nullable(Timestamp), finished_at: Nullable(Timestamp), start_lsn: Nullable(Type.String()), stop_lsn: Nullable(Type.String()),
  database_id: Type.String(),
});
const Command = Type.Object({
  id: Type.String(), kind: Type.String(), status: Type.String(), error: Nullable(Type.String()), created_at: Timestamp, finished_at: Nullable(Timestamp),
});
/** The watcher's last check (beyond the spec): WAL continuity since the newest base backup, and backup checksums. */
const BackupHealth = Type.Object({
  ok: Type.Boolean(), problem: Nullable(Type.String()), base_backup_id: Nullable(Type.String()), timeline: Nullable(Type.Integer()),
  from_segment: Nullable(Type.String()), to_segment: Nullable(Type.String()), checked_segments: Type.Integer(),
  missing_segments: Type.Array(Type.String()), pending_segments: Type.Array(Type.String()),
  archiver_failure: Nullable(Type.Object({ wal: Type.String(), at: Type.String() })), corrupt_backups: Type.Array(Type.String()), checked_at: Timestamp,
});
const Instance = Type.Object({
  id: Type.String(), name: Type.String(), slug: Type.String(), label: Nullable(Type.String()), engine: Type.String(), version: Type.Integer(),
  size: Type.String(), storage_gb: Type.Integer(), pitr_retention_days: Type.Integer(), state: Type.String(), desired_state: Type.String(),
  status_reason: Nullable(Type.String()), public_host: Type.String(), internal_host: Type.String(), host: Type.String(), port: Type.Integer(),
  database: Type.String(), user: Type.String(), database_url: Type.String(), database_url_public: Type.String(),
  allowlist: Type.Array(Type.Object({ cidr: Type.String(), label: Type.String() })), ha_enabled: Type.Boolean(), pool_enabled: Type.Boolean(),
  extensions: Type.Array(Type.String()), compute: Type.Record(Type.String(), Type.Unknown()), storage: Type.Record(Type.String(), Type.Unknown()),
  authorized_clients: Type.Array(Type.String()), created_at: Timestamp, removed_at: Nullable(Timestamp),
  backup_health: Type.Optional(Nullable(BackupHealth)), storage_used_bytes: Type.Optional(Nullable(Type.Integer())),
  password: Type.Optional(Type.String()), superuser_password: Type.Optional(Type.String()), superuser_database_url: Type.Optional(Type.String()),
  backups: Type.Optional(Type.Array(Backup)), commands: Type.Optional(Type.Array(Command)),
});

const backupView = (b: repo.BackupRow) => ({
  id: b.id, database_id: b.database_id, kind: b.kind, label: b.label, status: b.status, size_bytes: b.size_bytes,
  started_at: b.started_at?.toISOString() ?? null, finished_at: b.finished_at?.toISOString() ?? null, start_lsn: b.start_lsn, stop_lsn: b.stop_lsn,
});
const commandView = (c: repo.CommandRow) => ({
  id: c.id, kind: c.kind, status: c.status, error: c.error, created_at: c.created_at.toISOString(), finished_at: c.finished_at?.toISOString() ?? null,
});

/** Managed PostgreSQL (spec: Database endpoints). Routes record intent; jobs change the servers. */
export async function databaseRoutes(app: FastifyInstance, ctx: AppContext, state: DatabasesState) {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const svc = databasesService({ db: ctx.db, config: ctx.config, jobs: ctx.jobs, provider: state.provider, hosts: ctx.kernel.hosts });
  const read = { scope: "databases:read", instance: { param: "id" } } as const;
  const write = { scope: "databases:write", instance: { param: "id" } } as const;
  const tags = ["databases"];
  const view = (row: repo.DatabaseRow, secrets?: Parameters<typeof databaseView>[2]) => databaseView(row, ctx.config, secrets);
  const owned = (request: { principal: { accountId: string } | null; params: { id: string } }) => svc.get(request.principal!.accountId, request.params.id);

  r.post("/v1/databases", {
    config: { auth: { scope: "databases:write", instance: "create" }, validationCodes: { "/slug": "bad_slug", "/name": "bad_slug", "/size": "bad_size", "/version": "bad_version" }, summaryKo: "데이터베이스를 만듭니다." },
    schema: {
      operationId: "createDatabase", tags, summary: "Create a PostgreSQL instance; 201 with one-time passwords and URLs.",
      body: Body({
        name: Type.String({ pattern: SLUG, minLength: 3, maxLength: 40 }),
        slug: Type.Optional(Type.String({ pattern: SLUG, minLength: 3, maxLength: 40 })),
        engine: Type.Optional(Type.Literal("postgres")),
        version: Type.Optional(Type.Union([Type.Literal(16), Type.Literal(17)])),
        size: Type.Optional(Size),
        storage_gb: Type.Optional(Type.Integer({ minimum: 1, maximum: 16384 })),
        pitr_retention_days: Type.Optional(Type.Integer({ minimum: 1, maximum: 35 })),
      }),
      response: { 201: Type.Composite([Instance, Type.Object({ command_id: Type.String() })]) },
    },
  }, async (request, reply) => {
    await assertCanCreate(ctx.db, request.principal!.accountId, { kind: "database", size: request.body.size ?? "dev", storage_gb: request.body.storage_gb });
    const { row, commandId } = await svc.create(request.principal!.accountId, request.body);
    return reply.code(201).send({ ...view(row, { password: row.initial_password!, superuser_password: row.initial_superuser_password! }), command_id: commandId });
  });

  r.get("/v1/databases", {
    config: { auth: { scope: "databases:read", instance: "list" }, summaryKo: "데이터베이스 목록(삭제된 것 제외)." },
    schema: { operationId: "listDatabases", tags, summary: "The caller's instances, removed ones excluded.", response: { 200: Type.Array(Instance) } },
  }, async (request) => (await repo.listDatabases(ctx.db, request.principal!.accountId, request.instanceFilter)).map((row) => view(row)));

  r.get("/v1/databases/:id", {
    config: { auth: read, summaryKo: "데이터베이스와 최근 백업 20개." },
    schema: { operationId: "getDatabase", tags, summary: "One instance by id or slug, with its 20 latest backups and recent commands.", params: Params, response: { 200: Instance } },
  }, async (request) => {
    const row = await owned(request);
    return { ...view(row), backups: (await repo.recentBackups(ctx.db, row.id)).map(backupView), commands: (await repo.recentCommands(ctx.db, row.id)).map(commandView) };
  });

  r.delete("/v1/databases/:id", {
    config: { auth: write, summaryKo: "소프트 삭제(7일 유예)." },
    schema: { operationId: "deleteDatabase", tags, summary: "Soft delete: the server stops; data and backups are kept 7 days.", params: Params, response: { 202: Accepted } },
  }, async (request, reply) => reply.code(202).send({ command_id: await svc.remove(await owned(request)) }));

  r.post("/v1/databases/:id/rotate-password", {
    config: { auth: write, summaryKo: "새 비밀번호를 발급하고 이전 비밀번호를 즉시 무효화합니다." },
    schema: {
      operationId: "rotateDatabasePassword", tags, summary: "Issue a new password (shown once); the old one is refused at once.", params: Params,
      response: { 200: Type.Composite([Instance, Type.Object({ command_id: Type.String() })]) },
    },
  }, async (request) => {
    const row = await owned(request);
    const { commandId, password } = await svc.rotatePassword(row);
    return { ...view(row, { password }), command_id: commandId };
  });

  r.post("/v1/databases/:id/backup", {
    config: { auth: write, summaryKo: "즉시 스냅샷 백업(선택 label)." },
    schema: { operationId: "backupDatabase", tags, summary: "Take a snapshot now; optional label.", params: Params, body: Body({ label: Type.Optional(Type.String({ maxLength: 100 })) }), response: { 202: Accepted } },
  }, async (request, reply) => reply.code(202).send({ command_id: await svc.backup(await owned(request), request.body?.label) }));

  r.post("/v1/databases/:id/restore", {
    config: { auth: write, summaryKo: "시점 복구(현재 501 restore_not_ready)." },
    schema: {
      operationId: "restoreDatabase", tags, summary: "Point-in-time restore; validates the target time, then 501 restore_not_ready unless DB_RESTORE_ENABLED=1.", params: Params,
      body: Body({ target_time: Type.Optional(Type.String({ maxLength: 64 })), time: Type.Optional(Type.String({ maxLength: 64 })) }), response: { 202: Accepted },
    },
  }, async (request, reply) => reply.code(202).send({ command_id: await svc.restore(await owned(request), request.body?.target_time ?? request.body?.time) }));

  r.post("/v1/databases/:id/stop", {
    config: { auth: write, summaryKo: "dev 데이터베이스를 멈춥니다." },
    schema: { operationId: "stopDatabase", tags, summary: "Stop (dev only); new connections fail, data is kept.", params: Params, response: { 202: Accepted } },
  }, async (request, reply) => reply.code(202).send({ command_id: await svc.stop(await owned(request)) }));

  r.post("/v1/databases/:id/start", {
    config: { auth: write, summaryKo: "멈춘 데이터베이스를 시작합니다." },
    schema: { operationId: "startDatabase", tags, summary: "Start a stopped database.", params: Params, response: { 202: Accepted } },
  }, async (request, reply) => reply.code(202).send({ command_id: await svc.start(await owned(request)) }));

  r.patch("/v1/databases/:id/allowlist", {
    config: { auth: write, summaryKo: "접속 허용 IP 목록(CIDR). 빈 배열은 모두 허용." },
    schema: {
      operationId: "setDatabaseAllowlist", tags, summary: "CIDR allow-list; an empty array allows all; the platform's own apps are always allowed.", params: Params,
      body: Body({ allowlist: Type.Array(Type.Object({ cidr: Type.String({ maxLength: 64 }), label: Type.Optional(Type.String({ maxLength: 100 })) }, { additionalProperties: false }), { maxItems: 100 }) }),
      response: { 202: Accepted },
    },
  }, async (request, reply) => reply.code(202).send({ command_id: await svc.setAllowlist(await owned(request), request.body.allowlist) }));

  r.get("/v1/databases/:id/attached-apps", {
    config: { auth: read, summaryKo: "연결된 앱 미리보기." },
    schema: { operationId: "listAttachedApps", tags, summary: "Apps attached to the database (none until apps exist).", params: Params, response: { 200: Type.Array(Type.Object({ id: Type.String(), slug: Type.String() })) } },
  }, async (request) => {
    await owned(request);
    return [];
  });

  r.post("/v1/databases/:id/authorize-clients", {
    config: { auth: write, summaryKo: "클라이언트 보안 그룹을 허가합니다." },
    schema: {
      operationId: "authorizeDatabaseClients", tags, summary: "Authorize client security groups.", params: Params,
      body: Body({ security_groups: Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 50 }) }), response: { 200: Instance },
    },
  }, async (request) => {
    const row = await owned(request);
    await repo.updateDatabase(ctx.db, row.id, { authorized_clients: [...new Set(request.body.security_groups)] });
    return view((await repo.findDatabaseById(ctx.db, row.id))!);
  });

  r.patch("/v1/databases/:id/compute", {
    config: { auth: write, summaryKo: "컴퓨트 자동 확장 설정." },
    schema: {
      operationId: "setDatabaseCompute", tags, summary: "Compute autoscale settings.", params: Params,
      body: Body({ enabled: Type.Boolean(), min_size: Type.Optional(Size), max_size: Type.Optional(Size), cpu_threshold_pct: Type.Optional(Type.Integer({ minimum: 10, maximum: 100 })) }),
      response: { 200: Instance },
    },
  }, async (request) => {
    const row = await owned(request);
    const order = ["dev", "basic", "pro", "business"];
    const { min_size, max_size } = request.body;
    if (min_size && max_size && order.indexOf(min_size) > order.indexOf(max_size)) throw badRequest("invalid_request", "min_size must not be above max_size.");
    await repo.updateDatabase(ctx.db, row.id, { compute_autoscale: request.body });
    return view((await repo.findDatabaseById(ctx.db, row.id))!);
  });

  r.patch("/v1/databases/:id/storage", {
    config: { auth: write, summaryKo: "스토리지 자동 확장 설정." },
    schema: {
      operationId: "setDatabaseStorage", tags, summary: "Storage autoscale settings.", params: Params,
      body: Body({ enabled: Type.Boolean(), max_gb: Type.Optional(Type.Integer({ minimum: 1, maximum: 16384 })), threshold_pct: Type.Optional(Type.Integer({ minimum: 50, maximum: 95 })), step_gb: Type.Optional(Type.Integer({ minimum: 1, maximum: 1024 })) }),
      response: { 200: Instance },
    },
  }, async (request) => {
    const row = await owned(request);
    if (request.body.max_gb !== undefined && request.body.max_gb < row.storage_gb) throw badRequest("invalid_request", "max_gb must be at least the current storage_gb.");
    await repo.updateDatabase(ctx.db, row.id, { storage_autoscale: request.body });
    return view((await repo.findDatabaseById(ctx.db, row.id))!);
  });

  r.post("/v1/databases/:id/resize", {
    config: { auth: write, validationCodes: { "/size": "bad_size" }, summaryKo: "크기를 바꿉니다(재시작)." },
    schema: { operationId: "resizeDatabase", tags, summary: "Change size (server settings, applied with a restart) and optionally grow storage.", params: Params, body: Body({ size: Size, storage_gb: Type.Optional(Type.Integer({ minimum: 1, maximum: 16384 })) }), response: { 202: Accepted } },
  }, async (request, reply) => reply.code(202).send({ command_id: await svc.resize(await owned(request), request.body.size, request.body.storage_gb) }));

  r.patch("/v1/databases/:id/rename", {
    config: { auth: write, summaryKo: "표시 이름(label)을 바꿉니다." },
    schema: { operationId: "renameDatabase", tags, summary: "Change the label (the slug and URLs stay).", params: Params, body: Body({ label: Type.String({ minLength: 1, maxLength: 100 }) }), response: { 200: Instance } },
  }, async (request) => {
    const row = await owned(request);
    await repo.updateDatabase(ctx.db, row.id, { label: request.body.label });
    return view((await repo.findDatabaseById(ctx.db, row.id))!);
  });

  r.post("/v1/databases/:id/extensions", {
    config: { auth: write, summaryKo: "기본 확장을 보장하고 허용된 확장을 추가합니다." },
    schema: { operationId: "ensureDatabaseExtensions", tags, summary: "Ensure default extensions and add allow-listed ones.", params: Params, body: Body({ names: Type.Optional(Type.Array(Type.String({ maxLength: 64 }), { maxItems: 50 })) }), response: { 202: Accepted } },
  }, async (request, reply) => reply.code(202).send({ command_id: await svc.extensions(await owned(request), request.body?.names ?? []) }));

  const HaStatus = Type.Object({ enabled: Type.Boolean(), standby: Type.Unknown() });
  r.get("/v1/databases/:id/ha", {
    config: { auth: read, summaryKo: "대기 서버(HA) 상태와 복제 지연." },
    schema: { operationId: "getDatabaseHa", tags, summary: "Standby status with replication lag.", params: Params, response: { 200: HaStatus } },
  }, async (request) => {
    const row = await owned(request);
    const standby = row.ha_enabled ? await svc.standbyStatus(row) : null;
    return { enabled: row.ha_enabled, standby };
  });
  r.post("/v1/databases/:id/ha", {
    config: { auth: write, summaryKo: "스트리밍 대기 서버를 켭니다(basic 이상)." },
    schema: { operationId: "enableDatabaseHa", tags, summary: "Enable a streaming standby (basic and above).", params: Params, response: { 202: Accepted } },
  }, async (request, reply) => reply.code(202).send({ command_id: await svc.ha(await owned(request), "ha_enable") }));
  r.delete("/v1/databases/:id/ha", {
    config: { auth: write, summaryKo: "대기 서버를 끕니다." },
    schema: { operationId: "disableDatabaseHa", tags, summary: "Disable the standby.", params: Params, response: { 202: Accepted } },
  }, async (request, reply) => reply.code(202).send({ command_id: await svc.ha(await owned(request), "ha_disable") }));
  r.post("/v1/databases/:id/ha/rebuild", {
    config: { auth: write, summaryKo: "대기 서버를 다시 만듭니다." },
    schema: { operationId: "rebuildDatabaseStandby", tags, summary: "Rebuild the standby.", params: Params, response: { 202: Accepted } },
  }, async (request, reply) => reply.code(202).send({ command_id: await svc.ha(await owned(request), "ha_rebuild") }));
  r.post("/v1/databases/:id/ha/switchover", {
    config: { auth: write, summaryKo: "대기 서버를 주 서버로 승격합니다. URL은 그대로입니다." },
    schema: { operationId: "switchoverDatabase", tags, summary: "Promote the standby; the old primary becomes the standby; URLs keep working.", params: Params, response: { 202: Accepted } },
  }, async (request, reply) => reply.code(202).send({ command_id: await svc.ha(await owned(request), "ha_switchover") }));

  r.get("/v1/databases/:id/pool", {
    config: { auth: read, summaryKo: "연결 풀(트랜잭션 모드) 상태." },
    schema: { operationId: "getDatabasePool", tags, summary: "Connection pooling (transaction mode) status and pooled URL.", params: Params, response: { 200: Type.Object({ enabled: Type.Boolean(), mode: Type.String(), pooled_url: Nullable(Type.String()), available: Type.Boolean() }) } },
  }, async (request) => {
    const row = await owned(request);
    const st = row.pool_enabled ? await svc.poolStatus(row) : null;
    return { enabled: row.pool_enabled, mode: "transaction", pooled_url: st?.endpoint ? connectionUrl(st.endpoint) : null, available: findPgbouncer() !== null };
  });
  r.put("/v1/databases/:id/pool", {
    config: { auth: write, summaryKo: "연결 풀을 켜거나 끕니다." },
    schema: { operationId: "setDatabasePool", tags, summary: "Turn transaction-mode pooling on or off.", params: Params, body: Body({ enabled: Type.Boolean() }), response: { 202: Accepted } },
  }, async (request, reply) => reply.code(202).send({ command_id: await svc.pool(await owned(request), request.body.enabled) }));

  r.post("/v1/databases/:id/initial-credentials", {
    config: { auth: write, summaryKo: "초기 자격 증명을 한 번만 보여 줍니다." },
    schema: { operationId: "revealInitialCredentials", tags, summary: "One-time reveal of the initial credentials; afterwards 409.", params: Params, response: { 200: Instance } },
  }, async (request) => {
    const row = await owned(request);
    return view(row, await svc.revealInitialCredentials(row));
  });

  r.get("/v1/backups", {
    config: { auth: { scope: "backups:read" }, summaryKo: "모든 백업 목록." },
    schema: { operationId: "listBackups", tags: ["backups"], summary: "Index of all the caller's backups, newest first.", querystring: Type.Object({ limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 200 })) }), response: { 200: Type.Array(Backup) } },
  }, async (request) => {
    const { rows } = await ctx.db.query<repo.BackupRow>(
      "SELECT * FROM database_backups WHERE account_id = $1 ORDER BY coalesce(finished_at, created_at) DESC LIMIT $2",
      [request.principal!.accountId, request.query.limit ?? 200],
    );
    return rows.map(backupView);
  });
}
