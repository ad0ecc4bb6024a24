import { randomUUID } from "node:crypto";
import type { FastifyBaseLogger } from "fastify";
import type pg from "pg";
import { inTransaction, type Db } from "../store/db.js";
import { asApiError } from "../http/errors.js";
import type { Kernel } from "../kernel/kernel.js";
import { maskSecrets, type SecretBox } from "../kernel/secrets.js";
import type { RuntimeProvider } from "../runtime/provider.js";
import * as repo from "./repo.js";
import { nextRunAfter } from "./schedule.js";
import { CRON_RUN_KIND, limitsOfCronSize } from "./sizes.js";
import { openRelease, openSecrets } from "./secrets.js";

export const ENV_COLUMN = "cron_jobs.env";
export const LABEL_RUN = "platform.cron-run";
const LOG_LINES = 1000;
const LOG_CHARS = 64 * 1024;

export interface SchedulerDeps {
  db: Db;
  runtime: RuntimeProvider;
  kernel: Pick<Kernel, "admit" | "use" | "mailer">;
  secrets: SecretBox;
  hostId: string;
  log: FastifyBaseLogger;
  /** an instant fired later than this (the platform was down, the tick stalled) is recorded missed, not run late */
  missedAfterSeconds: number;
  historyLimit: number;
  pollMs: number;
}

const containerOf = (runId: string) => `cron-${runId.replace(/-/g, "").slice(0, 20)}`;

/**
 * Fires due cron jobs and runs them to completion on this host. Every worker process ticks; a job's due row is
 * locked (SKIP LOCKED) and advanced in the transaction that records its run, and a run's (job, scheduled_at) is
 * unique, so each scheduled instant is fired by exactly one process however many tick at once.
 */
export function cronScheduler(deps: SchedulerDeps) {
  const { db, runtime, kernel } = deps;
  /** executions in this process, by run id (stop waits for them; tests await them) */
  const executing = new Map<string, Promise<repo.CronRunRow | null>>();

  async function tell(job: repo.CronJobRow, run: repo.CronRunRow): Promise<void> {
    const what =
      run.state === "missed" ? "missed a run" : run.state === "refused" ? "could not start a run" : "run failed";
    const text = [
      `Your cron job "${job.name}" ${what}.`,
      `Scheduled for: ${run.scheduled_at.toISOString()} (${job.schedule}, ${job.time_zone})`,
      `State: ${run.state}${run.exit_code !== null ? `, exit code ${run.exit_code}` : ""}`,
      run.reason ? `Reason: ${run.reason}` : "",
      run.logs ? `Last log lines:\n${run.logs.split("\n").slice(-20).join("\n")}` : "",
      `Runs: GET /v1/cron-jobs/${job.id}/runs/${run.id}`,
    ].filter(Boolean);
    await kernel.mailer
      .send({ to: job.notify_email, subject: `Cron job "${job.name}": ${what}`, text: text.join("\n") })
      .catch((err) => deps.log.warn({ err, job: job.id }, "cron notice not sent"));
  }

  /**
   * One run of a job now, within the caller's transaction: the concurrency policy, then admission (budgets, deploy
   * rules, partner quotas). Returns the run row (running, or skipped/refused with the reason), or null when this
   * instant was fired already.
   */
  async function begin(
    tx: pg.PoolClient,
    job: repo.CronJobRow,
    scheduledAt: Date,
    trigger: "schedule" | "manual",
  ): Promise<repo.CronRunRow | null> {
    const base = { id: randomUUID(), job_id: job.id, scheduled_at: scheduledAt, trigger, size: job.size };
    const ended = (state: repo.RunState, reason: string) =>
      repo.insertRun(tx, job, { ...base, state, reason, host_id: null, container: null });
    const running = await repo.runningRuns(tx, job.id);
    if (running.length && job.concurrency_policy === "forbid")
      return ended("skipped", `run ${running[0].id} is still going (concurrency_policy forbid)`);
    try {
      await kernel.admit(tx, {
        owner: { kind: job.owner_kind, id: job.owner_id },
        accountId: job.account_id,
        kind: CRON_RUN_KIND,
        size: job.size,
        update: true,
        starts: 1,
        image: job.image,
        shape: "cron-job",
      });
    } catch (err) {
      const api = asApiError(err);
      if (!api) throw err;
      return ended("refused", `${api.code}: ${api.message}`);
    }
    const run = await repo.insertRun(tx, job, {
      ...base,
      state: "running",
      reason: null,
      host_id: deps.hostId,
      container: containerOf(base.id),
    });
    if (run && running.length && job.concurrency_policy === "replace")
      await repo.cancelRuns(
        tx,
        running.map((r) => r.id),
        `replaced by run ${run.id} (concurrency_policy replace)`,
      );
    return run;
  }

  /**
   * Fires every job due at `now` (the scheduler's clock: tests pass one). An instant more than missedAfterSeconds
   * old is recorded `missed` and told by mail; instants between it and now are not made up one by one.
   */
  async function fireDue(now: Date = new Date()): Promise<repo.CronRunRow[]> {
    const made: { job: repo.CronJobRow; run: repo.CronRunRow }[] = [];
    await inTransaction(db, async (tx) => {
      for (const job of await repo.lockDueJobs(tx, now, 100)) {
        const scheduled = job.next_run_at!;
        const lateMs = now.getTime() - scheduled.getTime();
        const run =
          lateMs > deps.missedAfterSeconds * 1000
            ? await repo.insertRun(tx, job, {
                id: randomUUID(),
                job_id: job.id,
                scheduled_at: scheduled,
                trigger: "schedule",
                state: "missed",
                reason: `not fired within ${deps.missedAfterSeconds} s of its time (checked ${now.toISOString()})`,
                size: job.size,
                host_id: null,
                container: null,
              })
            : await begin(tx, job, scheduled, "schedule");
        await repo.updateJob(tx, job.id, { next_run_at: nextRunAfter(job.schedule, job.time_zone, now) });
        if (run) made.push({ job, run });
      }
    });
    for (const { job, run } of made) afterBegin(job, run);
    return made.map((m) => m.run);
  }

  /** `POST /v1/cron-jobs/{id}/run`: a manual run now, under the same policy and admission */
  async function runNow(tx: pg.PoolClient, job: repo.CronJobRow): Promise<repo.CronRunRow> {
    return (await begin(tx, job, new Date(), "manual"))!;
  }

  function afterBegin(job: repo.CronJobRow, run: repo.CronRunRow): void {
    if (run.state === "running") {
      const p = execute(job, run).finally(() => executing.delete(run.id));
      executing.set(run.id, p);
    } else {
      void repo.pruneRuns(db, job.id, deps.historyLimit).catch(() => null);
      if (run.state === "missed" || run.state === "refused") void tell(job, run);
    }
  }

  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  /** the container, run to completion (or its deadline, or until `replace` cancelled it), then its row ended */
  async function execute(job: repo.CronJobRow, run: repo.CronRunRow): Promise<repo.CronRunRow | null> {
    const name = run.container!;
    const owner = { kind: job.owner_kind, id: job.owner_id };
    let result: { state: repo.RunState; reason: string | null; exitCode: number | null };
    let logs = "";
    // the pod release's env and secrets, then the job's own (which win); every secret is masked in the logs
    const release = openRelease(deps.secrets, job.release_env_sealed);
    const own = openSecrets(deps.secrets, job.secret_env_sealed).values;
    const secret = { ...release.secret, ...own };
    try {
      await runtime.create({
        name,
        image: job.image,
        command: job.command,
        env: {
          ...release.env,
          ...release.secret,
          ...(JSON.parse(deps.secrets.open(job.env_sealed, ENV_COLUMN)) as Record<string, string>),
          ...own,
        },
        port: null,
        limits: limitsOfCronSize(job.size),
        network: null,
        mounts: [],
        labels: { [LABEL_RUN]: run.id, "platform.cron-job": job.id, "platform.host": deps.hostId },
        pullAuth: (await kernel.use("imageAccess")?.pullFor(owner, job.image)) ?? null,
        // create runs it (detached); podman kills it at the deadline even if this process is gone by then
        timeoutSeconds: job.deadline_seconds,
      });
      const deadline = Date.now() + job.deadline_seconds * 1000;
      let stopped: string | null = null;
      for (;;) {
        const info = await runtime.inspect(name);
        if (!info || info.status === "exited") break;
        if ((await repo.runState(db, run.id)) === "cancelled") {
          await runtime.stop(name, 2);
          stopped = "cancelled";
          break;
        }
        if (Date.now() > deadline) {
          await runtime.stop(name, 0);
          stopped = `its deadline of ${job.deadline_seconds} s passed`;
          break;
        }
        await sleep(deps.pollMs);
      }
      const info = await runtime.inspect(name);
      logs = maskSecrets((await runtime.logs(name, LOG_LINES)).join("\n"), secret).slice(-LOG_CHARS);
      const exitCode = info?.exitCode ?? null;
      result =
        stopped !== null
          ? { state: "failed", reason: `stopped: ${stopped}`, exitCode }
          : exitCode === 0
            ? { state: "succeeded", reason: null, exitCode }
            : { state: "failed", reason: `exit code ${exitCode}`, exitCode };
    } catch (err) {
      const api = asApiError(err);
      result = {
        state: "failed",
        reason: api ? `${api.code}: ${api.message}` : (err as Error).message,
        exitCode: null,
      };
    } finally {
      await runtime.remove(name).catch(() => null);
    }
    const done = await repo.finishRun(db, run.id, { ...result, logs });
    await repo.pruneRuns(db, job.id, deps.historyLimit);
    if (done?.state === "failed") await tell(job, done);
    return done;
  }

  /** a process killed mid-run left its run `running`: past its deadline it is ended here (the container went with --timeout) */
  async function sweepAbandoned(): Promise<void> {
    for (const run of await repo.abandonedRuns(db, deps.hostId, 60)) {
      if (executing.has(run.id)) continue;
      await runtime.remove(run.container!).catch(() => null);
      await repo.finishRun(db, run.id, {
        state: "failed",
        reason: "its process stopped before the run ended",
        exitCode: null,
        logs: "",
      });
    }
  }

  let timer: NodeJS.Timeout | null = null;
  function start(tickMs: number): void {
    const tick = () =>
      fireDue()
        .then(() => sweepAbandoned())
        .catch((err) => deps.log.error({ err }, "cron tick failed; the next tick retries"));
    timer = setInterval(tick, tickMs);
    timer.unref();
  }
  async function stop(): Promise<void> {
    if (timer) clearInterval(timer);
    timer = null;
    await Promise.allSettled([...executing.values()]);
  }

  /** resolves when the run this process executes has ended (tests) */
  const settled = (runId: string) => executing.get(runId) ?? Promise.resolve(null);

  return { fireDue, runNow, afterBegin, start, stop, settled };
}

export type CronScheduler = ReturnType<typeof cronScheduler>;
