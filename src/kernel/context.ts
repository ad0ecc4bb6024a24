import type { FastifyBaseLogger } from "fastify";
import type { Config } from "../config/config.js";
import type { Db } from "../store/db.js";
import type { JobQueue } from "../jobs/queue.js";
import type { RateLimitStore } from "../http/rate-limit.js";
import type { TokenResolver } from "../auth/token-resolver.js";
import type { RouteEntry } from "../http/route-table.js";
import type { AreaModule } from "./area.js";
import type { Kernel } from "./kernel.js";
import type { OwnerChangeFeed } from "./change-feed.js";
import type { SecretBox } from "./secrets.js";

/** The infrastructure a process starts with, whatever areas exist. Adding an area never changes it. */
export interface Infra {
  config: Config;
  db: Db;
  /** connection string of the control store, for LISTEN connections and the job queue */
  databaseUrl: string;
  rateLimit: RateLimitStore;
  jobs: JobQueue;
  /** resolved operator secret (configured or generated at first start) */
  operatorToken: string;
  log: FastifyBaseLogger;
  /** seals secrets stored at rest under the platform key */
  secrets: SecretBox;
  /** where areas read their own settings; process.env unless a test gives its own */
  env: Record<string, string | undefined>;
}

/** A running platform: infrastructure, the kernel's registries and every area's state. */
export interface Platform extends Infra {
  kernel: Kernel;
  /** which owners' resources changed, across processes: for per-owner read caches */
  changes: OwnerChangeFeed;
  areas: readonly AreaModule<any, any>[];
  /** an area's state as its setup built it (tests reach providers through this) */
  state<S>(area: string): S;
  /** periodic jobs of every area, for the job queue's scheduler */
  schedules: { name: string; cron: string }[];
}

/** What route registration gets: the platform plus the HTTP layer's own machinery. */
export interface AppContext extends Platform {
  tokens: TokenResolver;
  /** every registered route, for the manual and the auth tests */
  routeTable: RouteEntry[];
}
