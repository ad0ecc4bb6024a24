import PgBoss from "pg-boss";
import pg from "pg";
import type { FastifyBaseLogger } from "fastify";
import { down, up, type ComponentStatus } from "../kernel/components.js";

export type JobHandler<T = Record<string, unknown>> = (
  data: T,
  job: { id: string; retryCount: number },
) => Promise<void>;

export interface JobDefinition<T = Record<string, unknown>> {
  name: string;
  handler: JobHandler<T>;
  /** attempts after the first failure, with exponential back-off */
  retryLimit?: number;
  /** seconds a single run may take before it counts as failed and is retried */
  expireInSeconds?: number;
  /** jobs of this kind one process runs at once */
  concurrency?: number;
  /** runs once the last retry failed, to record the failure where a user can see it */
  onFinalFailure?: (data: T, message: string) => Promise<void>;
  /**
   * Work that must run on one host (a provider's files live there): one queue per host,
   * `<name>.<hostId>`, worked only by that host's worker processes; sends name the host.
   */
  perHost?: boolean;
  /** "stately": at most one job queued at a time (periodic per-host work never piles up behind a host that is down) */
  policy?: "standard" | "stately";
}

export interface SendOptions {
  /** a second job with the same key while one is queued or running is dropped */
  singletonKey?: string;
  startAfterSeconds?: number;
  /** the host whose queue gets a per-host job */
  host?: string;
}

/** What the hosts area tells the job queue about this process (src/hosts). */
export interface HostBinding {
  /** this process's host: its per-host queues are worked here when `worker` */
  hostId: string;
  /** false: this process runs no jobs at all (ROLES without worker) */
  worker: boolean;
  /** whether a host's workers are alive (a fresh heartbeat) */
  available(hostId: string): Promise<boolean>;
}

/** Sent when a job is queued for another host, so that host's workers fetch it at once instead of at their next poll. */
const WAKE_CHANNEL = "platform_jobs_wake";

/**
 * The platform's job queue: pg-boss on the control store, so jobs survive restarts and any
 * number of processes share the work. Areas define jobs; periodic ones are listed in periodic.ts.
 */
export class JobQueue {
  private boss: PgBoss;
  private definitions = new Map<string, JobDefinition<any>>();
  /** This process's workers per queue, woken on send so local work starts at once instead of at the next poll. */
  private workerIds = new Map<string, string[]>();
  private started = false;
  private lastError: { at: number; message: string } | null = null;
  private host: HostBinding | null = null;
  /** per-host queues known to exist (created on first send from this process) */
  private queues = new Set<string>();
  private wake: pg.Client | null = null;

  constructor(
    private connectionString: string,
    private log: FastifyBaseLogger,
    private runWorkers = true,
  ) {
    this.boss = new PgBoss({
      connectionString,
      schema: "pgboss",
      max: 4,
      archiveCompletedAfterSeconds: 3600,
      deleteAfterDays: 7,
    });
    this.boss.on("error", (err) => {
      this.lastError = { at: Date.now(), message: err instanceof Error ? err.message : String(err) };
      this.log.error({ err }, "job queue error");
    });
  }

  define<T>(def: JobDefinition<T>): void {
    this.definitions.set(def.name, def);
  }

  /** Called once by the hosts area at setup: per-host queues are worked for this host only, and not at all without the worker role. */
  bindHost(binding: HostBinding): void {
    this.host = binding;
    if (!binding.worker) this.runWorkers = false;
  }

  /** Whether the host behind a per-host queue is alive; true when no host is bound (one process runs everything). */
  async hostAvailable(hostId: string): Promise<boolean> {
    return this.host ? this.host.available(hostId) : true;
  }

  private queueOf(def: JobDefinition<any>, host: string | undefined): string {
    if (!def.perHost) {
      if (host) throw new Error(`${def.name} is not a per-host job`);
      return def.name;
    }
    if (!host) throw new Error(`${def.name} runs per host: send it with the host that holds the resource`);
    return `${def.name}.${host}`;
  }

  private async ensureQueue(def: JobDefinition<any>, queue: string): Promise<void> {
    if (this.queues.has(queue)) return;
    for (let attempt = 1; ; attempt++) {
      try {
        await this.boss.createQueue(queue, {
          name: queue,
          policy: def.policy ?? "standard",
          retryLimit: def.retryLimit ?? 5,
          retryBackoff: true,
          retryDelay: 5,
          expireInSeconds: def.expireInSeconds ?? 15 * 60,
        });
        break;
      } catch (err) {
        // each new queue attaches a partition to pgboss.job: two processes creating different queues at
        // once (each host its own) can deadlock; the victim's creation was rolled back and is simply retried
        if ((err as { code?: string }).code !== "40P01" || attempt >= 5) throw err;
        await new Promise((r) => setTimeout(r, 50 + Math.random() * 200));
      }
    }
    this.queues.add(queue);
  }

  /** for readiness: down before start, after stop, and while pg-boss reported an error in the last 30 s */
  health(): ComponentStatus {
    if (!this.started) return down("the job queue is not running");
    if (this.lastError && Date.now() - this.lastError.at < 30_000) return down(`job queue: ${this.lastError.message}`);
    return up();
  }

  async start(schedules: { name: string; cron: string }[] = []): Promise<void> {
    await this.boss.start();
    this.started = true;
    for (const def of this.definitions.values()) {
      if (def.perHost && !this.host)
        throw new Error(`${def.name} runs per host, but no host is bound (the hosts area)`);
      // a per-host job is worked only on its own host; other hosts' queues are created when first sent to
      const queue = def.perHost ? (this.runWorkers ? this.queueOf(def, this.host!.hostId) : null) : def.name;
      if (!queue) continue;
      await this.ensureQueue(def, queue);
      if (!this.runWorkers) continue;
      for (let i = 0; i < (def.concurrency ?? 1); i++) {
        const workerId = await this.boss.work<Record<string, unknown>>(
          queue,
          { pollingIntervalSeconds: 0.5, batchSize: 1, includeMetadata: true },
          async ([job]) => {
            try {
              await def.handler(job.data, { id: job.id, retryCount: job.retryCount });
            } catch (err) {
              this.log.error({ err, job: def.name, id: job.id }, "job failed");
              if (job.retryCount >= job.retryLimit && def.onFinalFailure) {
                await def.onFinalFailure(job.data, err instanceof Error ? err.message : String(err)).catch(() => {});
              }
              throw err;
            }
          },
        );
        this.workerIds.set(queue, [...(this.workerIds.get(queue) ?? []), workerId]);
      }
    }
    for (const s of schedules) {
      const def = this.definitions.get(s.name);
      // a periodic per-host job: each worker host schedules its own queue (stately, so a host that is down collects one run, not a backlog)
      const queue = def?.perHost ? (this.runWorkers ? this.queueOf(def, this.host!.hostId) : null) : s.name;
      if (def?.perHost) await this.boss.unschedule(s.name).catch(() => {}); // its schedule from before it ran per host
      if (queue) await this.boss.schedule(queue, s.cron, {}, { tz: "UTC" });
    }
    if (this.runWorkers && this.host) await this.listenForWakeUps();
  }

  /** Wakes this process's workers when another process queues work for this host. */
  private async listenForWakeUps(): Promise<void> {
    const client = new pg.Client({ connectionString: this.connectionString });
    client.on("error", (err) => {
      // polling still finds the work; a wake-up lost now only costs the polling interval
      this.log.warn({ err }, "job wake-up listener lost; relying on polling");
      if (this.wake === client) this.wake = null;
    });
    client.on("notification", (msg) => {
      for (const w of this.workerIds.get(msg.payload ?? "") ?? []) this.boss.notifyWorker(w);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${WAKE_CHANNEL}`);
      this.wake = client;
    } catch (err) {
      this.log.warn({ err }, "job wake-up listener not started; relying on polling");
      await client.end().catch(() => {});
    }
  }

  async send(name: string, data: object, options: SendOptions = {}): Promise<string | null> {
    const def = this.definitions.get(name);
    if (!def) throw new Error(`no job named ${name}`);
    const queue = this.queueOf(def, options.host);
    if (def.perHost) await this.ensureQueue(def, queue);
    const id = await this.boss.send(queue, data, {
      singletonKey: options.singletonKey,
      startAfter: options.startAfterSeconds,
    });
    if (id && !options.startAfterSeconds) {
      const local = this.workerIds.get(queue);
      if (local) for (const w of local) this.boss.notifyWorker(w);
      else if (def.perHost)
        await this.boss
          .getDb()
          .executeSql("SELECT pg_notify($1, $2)", [WAKE_CHANNEL, queue])
          .catch(() => {});
    }
    return id;
  }

  /**
   * Queues a job inside the caller's transaction (an outbox's fan-out): it exists exactly when the transaction
   * commits. Not for per-host jobs. Call `wakeLocal` after the commit so this process's workers start at once.
   */
  async sendIn(
    q: { query: (text: string, values: unknown[]) => Promise<{ rows: unknown[] }> },
    name: string,
    data: object,
    options: { startAfterSeconds?: number } = {},
  ): Promise<string | null> {
    const def = this.definitions.get(name);
    if (!def || def.perHost) throw new Error(`no shared job named ${name}`);
    return this.boss.send(name, data, {
      startAfter: options.startAfterSeconds,
      db: { executeSql: (text, values) => q.query(text, values) },
    });
  }

  /** Wakes this process's workers of a queue (after a transaction that queued work with sendIn committed). */
  wakeLocal(name: string): void {
    for (const w of this.workerIds.get(name) ?? []) this.boss.notifyWorker(w);
  }

  async stop(): Promise<void> {
    if (!this.started) return;
    this.started = false;
    this.workerIds.clear();
    const wake = this.wake;
    this.wake = null;
    await wake?.end().catch(() => {});
    await this.boss.stop({ graceful: true, wait: true, timeout: 30_000 });
  }
}
