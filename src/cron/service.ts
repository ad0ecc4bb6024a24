import { randomUUID } from "node:crypto";
import { isUniqueViolation, type Db } from "../store/db.js";
import { ApiError, found } from "../http/errors.js";
import type { InstanceFilter, Principal } from "../auth/principal.js";
import type { Kernel } from "../kernel/kernel.js";
import type { SecretBox } from "../kernel/secrets.js";
import type { RuntimeProvider } from "../runtime/provider.js";
import { auditedTransaction } from "../audit/record.js";
import * as repo from "./repo.js";
import { checkSchedule, nextRunAfter } from "./schedule.js";
import { checkCronSize, CRON_RUN_KIND } from "./sizes.js";
import { ENV_COLUMN, type CronScheduler } from "./scheduler.js";
import { applySecrets, openRelease, openSecrets, sealRelease, sealSecrets } from "./secrets.js";

export interface CronJobInput {
  name: string;
  image?: string;
  pod?: string;
  command: string[];
  env?: Record<string, string>;
  /** secret values by name; on a change null removes one (src/cron/secrets.ts) */
  secret_env?: Record<string, string | null>;
  schedule: string;
  time_zone?: string;
  concurrency_policy?: repo.ConcurrencyPolicy;
  deadline_seconds?: number;
  size?: string;
  suspended?: boolean;
}
export type CronJobPatch = Partial<Omit<CronJobInput, "name">>;

export interface CronDeps {
  db: Db;
  secrets: SecretBox;
  kernel: Pick<Kernel, "admit" | "use">;
  runtime: RuntimeProvider;
  scheduler: CronScheduler;
}

export const DEFAULT_DEADLINE_SECONDS = 3600;

/** Cron jobs: what to run and when; the scheduler (scheduler.ts) fires and runs them. */
export function cronService(deps: CronDeps) {
  const { db, secrets, kernel } = deps;

  /**
   * `pod`: that pod's current release (its image, env and secrets, src/cron/secrets.ts), so a job made from an
   * app runs what the app runs; `image`: that image alone.
   */
  async function imageOf(
    p: Principal,
    f: { image?: string; pod?: string },
  ): Promise<{ image: string; podId: string | null; release: number | null; releaseEnv: string | null }> {
    if (f.image !== undefined && f.pod !== undefined)
      throw new ApiError("invalid_request", "Give image or pod, not both.");
    if (f.pod !== undefined) {
      const apps = kernel.use("appImages");
      const app = apps && (await apps.find(p, f.pod));
      const rel = app && app.kind === "pod" && (await apps.releaseOf?.(p, app));
      if (!app || !rel) throw new ApiError("not_found", `No pod "${f.pod}" for this account.`);
      const releaseEnv = sealRelease(secrets, { env: rel.env, secret: rel.secretEnv, meta: rel.secretMeta });
      return { image: rel.image, podId: app.id, release: rel.release, releaseEnv };
    }
    await kernel.use("imageAccess")?.pullFor(p.owner, f.image!);
    return { image: f.image!, podId: null, release: null, releaseEnv: null };
  }

  /** a name is plain or secret, never both */
  function checkNames(env: Record<string, string>, secret: Record<string, unknown>): void {
    const both = Object.keys(env).filter((k) => k in secret);
    if (both.length)
      throw new ApiError(
        "invalid_request",
        `${both.join(", ")} given both in env and in secret_env; a value is one or the other.`,
      );
  }

  const admit = (tx: Parameters<Kernel["admit"]>[0], p: Principal, size: string, image: string, update: boolean) =>
    kernel.admit(tx, {
      owner: p.owner,
      accountId: p.accountId,
      kind: CRON_RUN_KIND,
      size,
      update,
      image,
      shape: "cron-job",
    });

  async function create(p: Principal, f: CronJobInput): Promise<repo.CronJobRow> {
    const timeZone = f.time_zone ?? "UTC";
    checkSchedule(f.schedule, timeZone);
    const size = f.size ?? "nano";
    checkCronSize(size);
    if (f.image === undefined && f.pod === undefined)
      throw new ApiError("invalid_request", "image or pod is required.");
    const { image, podId, release, releaseEnv } = await imageOf(p, f);
    const secretDoc = applySecrets(secrets, { values: {}, meta: {} }, f.secret_env ?? {}, p);
    checkNames(f.env ?? {}, secretDoc.values);
    try {
      return await auditedTransaction(db, p, async (tx) => {
        await admit(tx, p, size, image, false);
        return repo.insertJob(tx, randomUUID(), p.owner, p.accountId, {
          name: f.name,
          image,
          source_pod_id: podId,
          command: f.command,
          env_sealed: secrets.seal(JSON.stringify(f.env ?? {}), ENV_COLUMN),
          secret_env_sealed: sealSecrets(secrets, secretDoc),
          source_release: release,
          release_env_sealed: releaseEnv,
          schedule: f.schedule,
          time_zone: timeZone,
          concurrency_policy: f.concurrency_policy ?? "forbid",
          deadline_seconds: f.deadline_seconds ?? DEFAULT_DEADLINE_SECONDS,
          size,
          suspended: f.suspended ?? false,
          notify_email: p.account.email,
          next_run_at: f.suspended ? null : nextRunAfter(f.schedule, timeZone, new Date()),
        });
      });
    } catch (err) {
      if (isUniqueViolation(err, "cron_jobs_name_live"))
        throw new ApiError("slug_taken", `A cron job named "${f.name}" exists already.`);
      throw err;
    }
  }

  const list = (p: Principal, filter: InstanceFilter) => repo.listJobs(db, p.owner, filter);

  async function get(p: Principal, ref: string): Promise<repo.CronJobRow> {
    return found(await repo.findJob(db, p.owner, ref), "cron job");
  }

  async function update(p: Principal, ref: string, f: CronJobPatch): Promise<repo.CronJobRow> {
    if (f.size !== undefined) checkCronSize(f.size);
    const source = f.image !== undefined || f.pod !== undefined ? await imageOf(p, f) : null;
    return auditedTransaction(db, p, async (tx) => {
      const cur = found(await repo.findJob(tx, p.owner, ref, { forUpdate: true }), "cron job");
      const schedule = f.schedule ?? cur.schedule;
      const timeZone = f.time_zone ?? cur.time_zone;
      checkSchedule(schedule, timeZone);
      const size = f.size ?? cur.size;
      await admit(tx, p, size, source?.image ?? cur.image, size === cur.size);
      const secretDoc =
        f.secret_env === undefined
          ? null
          : applySecrets(secrets, openSecrets(secrets, cur.secret_env_sealed), f.secret_env, p);
      checkNames(f.env ?? envOf(cur), (secretDoc ?? openSecrets(secrets, cur.secret_env_sealed)).values);
      const suspended = f.suspended ?? cur.suspended;
      const retimed = f.schedule !== undefined || f.time_zone !== undefined || f.suspended !== undefined;
      return repo.updateJob(tx, cur.id, {
        image: source?.image,
        source_pod_id: source ? source.podId : undefined,
        source_release: source ? source.release : undefined,
        release_env_sealed: source ? source.releaseEnv : undefined,
        secret_env_sealed: secretDoc ? sealSecrets(secrets, secretDoc) : undefined,
        command: f.command,
        env_sealed: f.env === undefined ? undefined : secrets.seal(JSON.stringify(f.env), ENV_COLUMN),
        schedule: f.schedule,
        time_zone: f.time_zone,
        concurrency_policy: f.concurrency_policy,
        deadline_seconds: f.deadline_seconds,
        size: f.size,
        suspended: f.suspended,
        // a new schedule (or a resume) counts from now: instants passed while suspended are not missed runs
        next_run_at: retimed ? (suspended ? null : nextRunAfter(schedule, timeZone, new Date())) : undefined,
      });
    });
  }

  /** the job goes; a run still going is cancelled (its process stops the container) */
  async function remove(p: Principal, ref: string): Promise<repo.CronJobRow> {
    return auditedTransaction(db, p, async (tx) => {
      const cur = found(await repo.findJob(tx, p.owner, ref, { forUpdate: true }), "cron job");
      const running = await repo.runningRuns(tx, cur.id);
      await repo.cancelRuns(
        tx,
        running.map((r) => r.id),
        "the cron job was deleted",
      );
      return repo.removeJob(tx, cur.id);
    });
  }

  async function runNow(p: Principal, ref: string): Promise<repo.CronRunRow> {
    const missing = await deps.runtime.unavailable();
    if (missing) throw new ApiError("runtime_unavailable", missing);
    const { job, run } = await auditedTransaction(db, p, async (tx) => {
      const job = found(await repo.findJob(tx, p.owner, ref, { forUpdate: true }), "cron job");
      return { job, run: await deps.scheduler.runNow(tx, job) };
    });
    deps.scheduler.afterBegin(job, run);
    return run;
  }

  const runs = async (p: Principal, ref: string, limit: number) => repo.listRuns(db, (await get(p, ref)).id, limit);

  async function run(p: Principal, ref: string, runId: string): Promise<repo.CronRunRow> {
    return found(await repo.findRun(db, (await get(p, ref)).id, runId), "cron run");
  }

  /** the job's own plain env */
  function envOf(job: repo.CronJobRow): Record<string, string> {
    return JSON.parse(secrets.open(job.env_sealed, ENV_COLUMN)) as Record<string, string>;
  }
  /** what the API shows of secrets: the job's own, and those of the pod release it took, as fingerprints */
  const secretEnvOf = (job: repo.CronJobRow) => openSecrets(secrets, job.secret_env_sealed).meta;
  const releaseOf = (job: repo.CronJobRow) => {
    if (job.source_release === null) return null;
    const r = openRelease(secrets, job.release_env_sealed);
    return { pod_id: job.source_pod_id, number: job.source_release, env: r.env, secret_env: r.meta };
  };

  return { create, list, get, update, remove, runNow, runs, run, envOf, secretEnvOf, releaseOf };
}

export type CronService = ReturnType<typeof cronService>;
