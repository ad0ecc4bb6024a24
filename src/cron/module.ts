import { fileURLToPath } from "node:url";
import { defineArea, rowLookup } from "../kernel/area.js";
import { int } from "../config/config.js";
import { meteredResource, tableMetering } from "../kernel/metered.js";
import { createRuntime } from "../runtime/index.js";
import type { RuntimeProvider } from "../runtime/provider.js";
import { CRON_ERROR_CODES } from "./errors.js";
import { CRON_SCOPES } from "./scopes.js";
import { cronScheduler, type CronScheduler } from "./scheduler.js";
import { cronService, type CronService } from "./service.js";
import { cronRoutes } from "./routes.js";
import { CRON_RUN_KIND } from "./sizes.js";
import * as repo from "./repo.js";

export interface CronConfig {
  tickMs: number;
  missedAfterSeconds: number;
  historyLimit: number;
  pollMs: number;
}

export interface CronState {
  runtime: RuntimeProvider;
  scheduler: CronScheduler;
  service: CronService;
  config: CronConfig;
}

const metered = (r: repo.CronRunRow) => meteredResource(r, CRON_RUN_KIND, r.size, 0);

/** Cron jobs (issue 29): scheduled containers run to completion on the worker hosts (src/cron/README.md). */
export const cronArea = defineArea<CronState, CronConfig>({
  name: "cron",
  errors: CRON_ERROR_CODES,
  scopes: CRON_SCOPES,
  migrations: fileURLToPath(new URL("./migrations/", import.meta.url)),
  tags: [
    { name: "cron-jobs", description: "Commands run on a schedule in a container, to completion, with a history." },
  ],
  config: (env) => ({
    // each worker process looks for due jobs this often; the instant fires within one tick of its time
    tickMs: int(env, "CRON_TICK_MS", 5000, 100, 60_000),
    // an instant found later than this (platform down) is a missed run, told by mail, not a late one
    missedAfterSeconds: int(env, "CRON_MISSED_AFTER_SECONDS", 120, 10, 86_400),
    historyLimit: int(env, "CRON_HISTORY_LIMIT", 50, 1, 1000),
    pollMs: int(env, "CRON_POLL_MS", 500, 50, 10_000),
  }),
  setup: (p, config) => {
    const runtime = createRuntime(p.env);
    const scheduler = cronScheduler({
      db: p.db,
      runtime,
      kernel: p.kernel,
      secrets: p.secrets,
      hostId: p.kernel.require("hosts").local.id,
      log: p.log,
      missedAfterSeconds: config.missedAfterSeconds,
      historyLimit: config.historyLimit,
      pollMs: config.pollMs,
    });
    const service = cronService({ db: p.db, secrets: p.secrets, kernel: p.kernel, runtime, scheduler });
    return { runtime, scheduler, service, config };
  },
  routes: (_app, _p, s) => cronRoutes(s.service),
  metering: () =>
    tableMetering(
      CRON_RUN_KIND,
      repo.BILLABLE_RUNS,
      metered,
      async (q, ids) => new Map((await repo.runNames(q, ids)).map((r) => [r.id, { name: r.name, slug: null }])),
    ),
  instances: (p) =>
    rowLookup(
      "cron-jobs",
      (owner, ref) => repo.findJob(p.db, owner, ref),
      (job) => job.name,
    ),
  // worker processes with a runtime tick; API-only processes only record jobs
  start: async (p, s) => {
    if (!p.kernel.require("hosts").local.roles.includes("worker")) return;
    if (await s.runtime.unavailable()) return;
    s.scheduler.start(s.config.tickMs);
  },
  stop: async (_p, s) => s.scheduler.stop(),
});
