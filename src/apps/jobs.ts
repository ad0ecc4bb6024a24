import type { JobSpec } from "../kernel/area.js";
import type { JobQueue } from "../jobs/queue.js";
import { reconcilePod, sweepHost, type ReconcilerDeps } from "./reconciler.js";
import { RECONCILE_JOB } from "./service.js";

/**
 * The apps worker of one host: reconcile jobs per pod (sent by every change, on the pod's host queue), a sweep
 * every few seconds (crashed containers, orphans, lost sends) and at start (adoption after a restart).
 */
export class PodWorker {
  private timer: NodeJS.Timeout | null = null;
  private sweeping: Promise<Awaited<ReturnType<typeof sweepHost>>> | null = null;
  private readonly retries = new Map<string, NodeJS.Timeout>();
  readonly deps: ReconcilerDeps;

  constructor(
    base: Omit<ReconcilerDeps, "again">,
    private readonly jobs: Pick<JobQueue, "send">,
    private readonly sweepMs: number,
  ) {
    this.deps = { ...base, again: (podId, seconds) => this.again(podId, seconds) };
  }

  private readonly inFlight = new Map<string, { again: boolean; done: Promise<void> }>();

  /** one reconcile per pod in this process; asking while one runs makes it go once more when it ends */
  reconcile = (podId: string): Promise<void> => {
    const running = this.inFlight.get(podId);
    if (running) {
      running.again = true;
      return running.done;
    }
    const entry = { again: false, done: Promise.resolve() };
    entry.done = (async () => {
      do {
        entry.again = false;
        await reconcilePod(this.deps, podId);
      } while (entry.again);
    })().finally(() => this.inFlight.delete(podId));
    this.inFlight.set(podId, entry);
    return entry.done;
  };

  /** a back-off restart: a timer here, and a delayed job in case this process dies meanwhile */
  private again(podId: string, seconds: number) {
    clearTimeout(this.retries.get(podId));
    this.retries.set(
      podId,
      setTimeout(() => {
        this.retries.delete(podId);
        void this.reconcile(podId).catch((err) => this.deps.log.error({ err, pod: podId }, "pod reconcile failed"));
      }, seconds * 1000).unref(),
    );
    void this.jobs
      .send(RECONCILE_JOB, { podId }, { host: this.deps.hostId, startAfterSeconds: Math.ceil(seconds) + 5 })
      .catch(() => null);
  }

  sweep(): Promise<Awaited<ReturnType<typeof sweepHost>>> {
    this.sweeping ??= sweepHost(this.deps, this.reconcile).finally(() => (this.sweeping = null));
    return this.sweeping;
  }

  start(): void {
    this.timer = setInterval(() => {
      void this.sweep().catch((err) => this.deps.log.error({ err }, "pod sweep failed; the next one retries"));
    }, this.sweepMs).unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    for (const t of this.retries.values()) clearTimeout(t);
    this.retries.clear();
    await this.sweeping?.catch(() => {});
  }
}

export function podJobs(worker: PodWorker): JobSpec<any>[] {
  return [
    {
      name: RECONCILE_JOB,
      perHost: true, // containers live on the pod's host: only that host's workers touch them
      concurrency: 8,
      retryLimit: 3,
      expireInSeconds: 300,
      handler: async (data: { podId: string }) => worker.reconcile(data.podId),
    },
  ];
}
