import PgBoss from "pg-boss";
import type { FastifyBaseLogger } from "fastify";

export type JobHandler<T = Record<string, unknown>> = (data: T, job: { id: string; retryCount: number }) => Promise<void>;

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
}

export interface SendOptions {
  /** a second job with the same key while one is queued or running is dropped */
  singletonKey?: string;
  startAfterSeconds?: number;
}

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

  constructor(connectionString: string, private log: FastifyBaseLogger, private runWorkers = true) {
    this.boss = new PgBoss({ connectionString, schema: "pgboss", max: 4, archiveCompletedAfterSeconds: 3600, deleteAfterDays: 7 });
    this.boss.on("error", (err) => this.log.error({ err }, "job queue error"));
  }

  define<T>(def: JobDefinition<T>): void {
    this.definitions.set(def.name, def);
  }

  async start(schedules: { name: string; cron: string }[] = []): Promise<void> {
    await this.boss.start();
    this.started = true;
    for (const def of this.definitions.values()) {
      await this.boss.createQueue(def.name, {
        name: def.name,
        retryLimit: def.retryLimit ?? 5,
        retryBackoff: true,
        retryDelay: 5,
        expireInSeconds: def.expireInSeconds ?? 15 * 60,
      });
      if (!this.runWorkers) continue;
      for (let i = 0; i < (def.concurrency ?? 1); i++) {
        const workerId = await this.boss.work<Record<string, unknown>>(def.name, { pollingIntervalSeconds: 0.5, batchSize: 1, includeMetadata: true }, async ([job]) => {
          try {
            await def.handler(job.data, { id: job.id, retryCount: job.retryCount });
          } catch (err) {
            this.log.error({ err, job: def.name, id: job.id }, "job failed");
            if (job.retryCount >= job.retryLimit && def.onFinalFailure) {
              await def.onFinalFailure(job.data, err instanceof Error ? err.message : String(err)).catch(() => {});
            }
            throw err;
          }
        });
        this.workerIds.set(def.name, [...(this.workerIds.get(def.name) ?? []), workerId]);
      }
    }
    for (const s of schedules) await this.boss.schedule(s.name, s.cron, {}, { tz: "UTC" });
  }

  async send(name: string, data: object, options: SendOptions = {}): Promise<string | null> {
    if (!this.definitions.has(name)) throw new Error(`no job named ${name}`);
    const id = await this.boss.send(name, data, {
      singletonKey: options.singletonKey,
      startAfter: options.startAfterSeconds,
    });
    if (id && !options.startAfterSeconds) for (const w of this.workerIds.get(name) ?? []) this.boss.notifyWorker(w);
    return id;
  }

  async stop(): Promise<void> {
    if (!this.started) return;
    this.started = false;
    this.workerIds.clear();
    await this.boss.stop({ graceful: true, wait: true, timeout: 30_000 });
  }
}
