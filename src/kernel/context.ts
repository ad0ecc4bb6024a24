import type { FastifyBaseLogger } from "fastify";
import type { Config } from "../config/config.js";
import type { Db } from "../store/db.js";
import type { JobQueue } from "../jobs/queue.js";
import type { RateLimitStore } from "../http/rate-limit.js";
import type { TokenResolver } from "../auth/token-resolver.js";
import type { RouteEntry } from "../http/route-table.js";
import type { Route } from "../http/route.js";
import type { ErrorCode } from "../http/errors.js";
import type { FastifyInstance } from "fastify";
import type { AdmissionCheck, InstanceLookup, JobSpec, Lifecycle, MeteringSource } from "./contracts.js";
import type { Kernel } from "./kernel.js";
import type { OwnerChangeFeed } from "./change-feed.js";
import type { SecretBox } from "./secrets.js";
import type { ComponentStatus } from "./components.js";
import type { ErrorTable } from "../http/errors.js";
import type { ScopeTable } from "../auth/scopes.js";

/** One component's readiness check (src/meta/health.ts); answers within a couple of seconds. */
export type HealthCheck = () => ComponentStatus | Promise<ComponentStatus>;

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
  /** the components this process runs, by name, for readiness: the store, jobs and Redis, what areas declare
   * (`health`), and what main.ts supervises itself (the forked edge) */
  health: Map<string, HealthCheck>;
}

/** What route registration gets: the platform plus the HTTP layer's own machinery. */
export interface AppContext extends Platform {
  tokens: TokenResolver;
  /** every registered route, for the manual and the auth tests */
  routeTable: RouteEntry[];
}

/**
 * One resource area. `src/areas.ts` lists them; nothing else in the kernel names an area.
 * `setup` builds the area's per-process state (providers, services) once; every other hook gets it.
 */
export interface AreaModule<S = unknown, C = unknown> {
  name: string;
  /** the OpenAPI tags the area's routes use, each with a one-line description (listed at the top of /v1/openapi.json) */
  tags?: { name: string; description: string }[];
  /** the area's own error codes (code → [status, meaning], in src/<area>/errors.ts), merged at start-up into the
   * one catalog (http/errors.ts); a code declared twice stops start-up */
  errors?: ErrorTable;
  /** the scope resources the area's routes are granted on (src/<area>/scopes.ts), merged at start-up into the
   * grammar (auth/scopes.ts); a resource declared twice stops start-up */
  scopes?: ScopeTable;
  /** the folder of the area's own numbered SQL migrations (`NNN_name.sql`), applied with src/store/migrations
   * in number order (store/migrate.ts) */
  migrations?: string;
  /** parses the area's own settings from the environment; throw ConfigError naming the variable */
  config?: (env: Record<string, string | undefined>) => C;
  setup?: (platform: Platform, config: C) => S | Promise<S>;
  /** the area's operations (http/route.ts declarations), or registers them itself on `app` */
  routes?: (
    app: FastifyInstance,
    ctx: AppContext,
    state: S,
  ) => void | readonly Route[] | Promise<void | readonly Route[]>;
  jobs?: (platform: Platform, state: S) => JobSpec<any>[];
  /** one source per priced kind (an area with several kinds returns several) */
  metering?: (platform: Platform, state: S) => MeteringSource | MeteringSource[];
  lifecycle?: (platform: Platform, state: S) => Lifecycle;
  admission?: (platform: Platform, state: S) => AdmissionCheck;
  /** the codes the admission check refuses with; every route declaring `admits` can answer them (OpenAPI) */
  admissionErrors?: ErrorCode[];
  /** one lookup per instance-limited resource of the area */
  instances?: (platform: Platform, state: S) => InstanceLookup | InstanceLookup[];
  /** the components the area runs in this process, by name (edge, registry, s3), for readiness */
  health?: (platform: Platform, state: S) => Record<string, HealthCheck>;
  /** after the job queue started, before the API listens (e.g. reconcile servers to their recorded state) */
  start?: (platform: Platform, state: S) => Promise<void>;
  /** at shutdown, after the API stopped taking requests */
  stop?: (platform: Platform, state: S) => Promise<void>;
}

/** Keeps an area's state type checked inside its own module while the list holds them all. */
export function defineArea<S, C = undefined>(area: AreaModule<S, C>): AreaModule<any, any> {
  return area;
}
