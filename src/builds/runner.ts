import { readdir, rm } from "node:fs/promises";
import { inTransaction } from "../store/db.js";
import { killLeftover } from "./buildah.js";
import { removeLeftoverCgroup } from "./cgroup.js";
import { runBuild, workDirOf, type Abort, type Control, type JobDeps } from "./build-job.js";
import * as repo from "./repo.js";

export const STOPPED_REASON = "the platform stopped during the build";

export interface RunnerDeps extends JobDeps {
  hostId: string;
  /** this process's lease (src/hosts), recorded on the builds it runs; null: not held now (nothing is claimed) */
  lease: () => string | null;
}

/**
 * The builds of one host: the `builds` rows are the queue. Every poll (and at once when a build is started
 * through this process) the runner claims queued builds of its host while the host runs fewer than
 * BUILD_CONCURRENCY, runs them in this process, and watches the ones it runs for cancels made through any
 * process. Builds left `building` by a process that is gone are marked failed, and a builder such a process
 * left running is killed.
 */
export class BuildRunner {
  private readonly running = new Map<string, { ctl: Control; done: Promise<void> }>();
  private timer: NodeJS.Timeout | null = null;
  private ticking: Promise<void> | null = null;
  private again = false;
  private stopped = false;

  constructor(private readonly d: RunnerDeps) {}

  /** At start: orphans of a dead process on this host are failed, stray working directories removed. */
  async start(): Promise<void> {
    this.stopped = false;
    await this.recover();
    await this.sweepDirectories();
    this.timer = setInterval(() => this.wake(), this.d.config.pollMs).unref();
    this.wake();
  }

  /** Looks for work now (after a start through this process, or a cancel). */
  wake(): void {
    if (this.stopped) return;
    if (this.ticking) {
      this.again = true;
      return;
    }
    this.ticking = (async () => {
      do {
        this.again = false;
        await this.tick().catch((err) => this.d.log.error({ err }, "build runner tick failed; the next one retries"));
      } while (this.again && !this.stopped);
    })().finally(() => (this.ticking = null));
  }

  private async tick(): Promise<void> {
    await this.watch();
    const lease = this.d.lease();
    // without the lease this process's own builds would look orphaned to others: it claims nothing then
    if (!lease) return;
    await this.recover();
    while (!this.stopped && this.running.size < this.d.config.concurrency) {
      const row = await inTransaction(this.d.db, (tx) =>
        repo.claimNext(tx, this.d.hostId, this.d.config.concurrency, lease),
      );
      if (!row) break;
      this.launch(row);
    }
  }

  private launch(row: repo.BuildRow): void {
    const ctl: Control = { step: null, aborted: null };
    const timer = setTimeout(
      () =>
        this.abort(ctl, {
          status: "failed",
          reason: `timed out after ${this.d.config.timeoutSeconds} s (BUILD_TIMEOUT_SECONDS)`,
        }),
      this.d.config.timeoutSeconds * 1000,
    ).unref();
    const done = runBuild(this.d, row, ctl)
      .catch((err) => this.d.log.error({ err, build: row.id }, "build runner failed"))
      .finally(() => {
        clearTimeout(timer);
        this.running.delete(row.id);
        this.wake(); // a slot is free
      });
    this.running.set(row.id, { ctl, done });
  }

  private abort(ctl: Control, why: Abort): void {
    if (ctl.aborted) return;
    ctl.aborted = why;
    ctl.step?.kill();
  }

  /** Cancels of builds this process runs, wherever they were made, stop them at once. */
  private async watch(): Promise<void> {
    if (!this.running.size) return;
    const now = await repo.statuses(this.d.db, [...this.running.keys()]);
    for (const [id, { ctl }] of this.running)
      if (now.get(id) !== "building") this.abort(ctl, { status: "cancelled", reason: "cancelled" });
  }

  /** A cancel made through this process: the build's processes are killed now, not at the next poll. */
  cancelled(id: string): void {
    const run = this.running.get(id);
    if (run) this.abort(run.ctl, { status: "cancelled", reason: "cancelled" });
    // not running here (waiting for its upload or start): its source goes now
    else void rm(workDirOf(this.d.root, id), { recursive: true, force: true }).catch(() => {});
  }

  /** Builds of this host whose process is gone are failed; uploads that will never start are expired. */
  async recover(): Promise<void> {
    const orphans = await inTransaction(this.d.db, (tx) => repo.failOrphans(tx, this.d.hostId, STOPPED_REASON));
    for (const row of orphans) {
      const killed = row.runner_pid ? await killLeftover(row.runner_pid, workDirOf(this.d.root, row.id)) : false;
      await removeLeftoverCgroup(row.id).catch(() => {});
      this.d.log.warn(
        { build: row.id, killedLeftover: killed },
        "build was running when its platform stopped; marked failed",
      );
    }
    const expired = await repo.expireUploads(this.d.db, this.d.hostId);
    if (orphans.length || expired.length) await this.sweepDirectories();
  }

  /** Working directories of builds that are neither waiting for their start nor running are removed. */
  private async sweepDirectories(): Promise<void> {
    const names = await readdir(this.d.root).catch(() => [] as string[]);
    const ids = names.filter((n) => /^[0-9a-f-]{36}$/.test(n) && !this.running.has(n));
    for (const id of await repo.settledOnHost(this.d.db, this.d.hostId, ids))
      await rm(workDirOf(this.d.root, id), { recursive: true, force: true }).catch(() => {});
  }

  /** At shutdown: running builds are killed and marked failed (a restart would find them so anyway). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    for (const { ctl } of this.running.values()) this.abort(ctl, { status: "failed", reason: STOPPED_REASON });
    await Promise.all([...this.running.values()].map((r) => r.done));
    await this.ticking?.catch(() => {});
  }
}
