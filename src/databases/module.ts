import { defineArea } from "../kernel/area.js";
import type { DatabasesState } from "./state.js";
import { findPgbouncer, LocalDatabaseProvider } from "./provider/local/index.js";
import { databaseRoutes } from "./routes/index.js";
import { ConfigError, int, oneOf } from "../config/config.js";
import { databaseJobs, DEFAULT_APP_SESSION_GRACE_S, reconcileNow } from "./jobs.js";
import { databaseLifecycle, databaseMetering } from "./metering.js";
import * as repo from "./repo.js";
import { adoptUnplaced } from "./placement.js";
import { appsSide, databaseAttachable } from "./attachments.js";
import { databasesOwned } from "./owned.js";
import { DATABASES_ERROR_CODES } from "./errors.js";
import { DATABASES_SCOPES } from "./scopes.js";
import { databaseIdleJobs, databaseIdleService } from "./idle/service.js";
import { databaseSampleSource } from "./metrics-source.js";

export type { DatabasesState } from "./state.js";

/** Managed PostgreSQL: instances, backups, HA, pooling (README: src/databases/README.md). */
type DatabasesConfig = {
  appSessionGraceS: number;
  restoreEnabled: boolean;
  idleMinSeconds: number;
  wakeTimeoutMs: number;
  wakeSyncMs: number;
};

export const databasesArea = defineArea<DatabasesState, DatabasesConfig>({
  name: "databases",
  errors: DATABASES_ERROR_CODES,
  scopes: DATABASES_SCOPES,
  tags: [
    {
      name: "databases",
      description: "Managed PostgreSQL: instances, passwords, allowlists, HA standby, pooling, settings.",
    },
    { name: "backups", description: "Base, WAL and snapshot backups of the caller's databases." },
  ],
  config: (env) => {
    // how long a password rotation leaves the owner's apps their old sessions, while they are rolled (attachments.ts)
    const raw = env.DB_APP_SESSION_GRACE_S;
    const appSessionGraceS = raw === undefined || raw === "" ? DEFAULT_APP_SESSION_GRACE_S : Number(raw);
    if (!Number.isInteger(appSessionGraceS) || appSessionGraceS < 0 || appSessionGraceS > 3600)
      throw new ConfigError("DB_APP_SESSION_GRACE_S", "must be a whole number of seconds 0-3600");
    // point-in-time restore is performed only when enabled (otherwise 501 restore_not_ready)
    const restoreEnabled = oneOf(env, "DB_RESTORE_ENABLED", ["0", "1"] as const, "0") === "1";
    return {
      appSessionGraceS,
      restoreEnabled,
      // scale-to-zero of dev databases (src/databases/README.md, "Scale-to-zero")
      idleMinSeconds: int(env, "DB_IDLE_MIN_SECONDS", 60, 1, 86_400),
      wakeTimeoutMs: int(env, "DB_WAKE_TIMEOUT_MS", 60_000, 1000, 600_000),
      wakeSyncMs: int(env, "DB_WAKE_SYNC_MS", 1000, 50, 60_000),
    };
  },
  setup: (p, config) => {
    // what a pod attaching a database is given (DATABASE_URL); the apps area asks it through the kernel
    p.kernel.contribute("attachables", databaseAttachable(p.secrets));
    // company assets and ownership moves (organizations)
    p.kernel.contribute("owned", databasesOwned(p.changes), "database");
    const provider = new LocalDatabaseProvider({ dataDir: p.config.dataDir, maxInstances: p.config.dbMaxInstances });
    // the servers' per-minute figures (src/metrics samples them through this)
    p.kernel.provide("databaseSamples", databaseSampleSource({ db: p.db, provider, log: p.log }));
    return {
      provider,
      poolAvailable: () => findPgbouncer() !== null,
      appSessionGraceS: config.appSessionGraceS,
      restoreEnabled: config.restoreEnabled,
      idle: databaseIdleService({
        db: p.db,
        jobs: p.jobs,
        kernel: p.kernel,
        provider,
        hostId: p.kernel.require("hosts").local.id,
        wakeTimeoutMs: config.wakeTimeoutMs,
        log: p.log,
      }),
      idleMinSeconds: config.idleMinSeconds,
      wakeSyncMs: config.wakeSyncMs,
    };
  },
  routes: (_app, ctx, state) => databaseRoutes(ctx, state),
  jobs: (p, s) => [
    ...databaseJobs(p.jobs, {
      db: p.db,
      config: p.config,
      provider: s.provider,
      secrets: p.secrets,
      hostId: p.kernel.require("hosts").local.id,
      apps: appsSide(p.kernel),
      appSessionGraceS: s.appSessionGraceS,
    }),
    ...(s.idle ? databaseIdleJobs(s.idle.sweep) : []),
  ],
  metering: () => databaseMetering(),
  lifecycle: (p) => databaseLifecycle({ jobs: p.jobs }),
  instances: (p) => ({
    resource: "databases",
    find: async (owner, ref) => {
      const row = await repo.findDatabase(p.db, owner, ref);
      return row && { id: row.id, slug: row.slug, accountId: row.account_id };
    },
  }),
  // bring every managed server back to its recorded state before taking requests
  start: async (p, s) => {
    const host = p.kernel.require("hosts").local;
    if (!host.roles.includes("worker")) return; // no instance lives on an API-only host
    const adopted = await adoptUnplaced(p.db, s.provider, host.id);
    if (adopted.length) p.log.info({ adopted }, "instances created before hosts existed now belong to this host");
    // idle-stopped dev databases are answered on their ports from now (wake fronts, src/databases/idle)
    s.idle?.every(s.wakeSyncMs ?? 1000);
    await reconcileNow(p.db, p.jobs, s.provider, host.id).catch((err) =>
      p.log.error({ err }, "start-up reconcile failed; the periodic reconciler retries"),
    );
  },
  stop: async (_p, s) => {
    s.idle?.stop();
    await (s.provider as LocalDatabaseProvider).fronts?.releaseAll();
    await (s.provider as LocalDatabaseProvider).idle?.();
  },
});
