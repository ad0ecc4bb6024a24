import { allRows, oneRow, type Queryable, setClauses } from "../store/db.js";
import type { Owner } from "../kernel/owner.js";
import { finderOf, listerOf } from "../store/find.js";
import type { OwnerColumns } from "../kernel/owned-repo.js";
import type { MeteredTable } from "../kernel/metered-repo.js";

export type ConcurrencyPolicy = "forbid" | "replace" | "allow";

export interface CronJobRow extends OwnerColumns {
  name: string;
  image: string;
  source_pod_id: string | null;
  command: string[];
  env_sealed: string;
  /** the job's own secret env (src/cron/secrets.ts) */
  secret_env_sealed: string | null;
  /** the release of source_pod_id the job took, and that release's env and secrets (sealed) */
  source_release: number | null;
  release_env_sealed: string | null;
  schedule: string;
  time_zone: string;
  concurrency_policy: ConcurrencyPolicy;
  deadline_seconds: number;
  size: string;
  suspended: boolean;
  notify_email: string;
  next_run_at: Date | null;
  created_at: Date;
  updated_at: Date;
  removed_at: Date | null;
}

export type RunState = "running" | "succeeded" | "failed" | "skipped" | "missed" | "refused" | "cancelled";

export interface CronRunRow extends OwnerColumns {
  job_id: string;
  scheduled_at: Date;
  trigger: "schedule" | "manual";
  state: RunState;
  reason: string | null;
  size: string;
  exit_code: number | null;
  host_id: string | null;
  container: string | null;
  started_at: Date | null;
  finished_at: Date | null;
  logs: string;
  created_at: Date;
}

const JOB_FIELDS = [
  "name",
  "image",
  "source_pod_id",
  "command",
  "env_sealed",
  "secret_env_sealed",
  "source_release",
  "release_env_sealed",
  "schedule",
  "time_zone",
  "concurrency_policy",
  "deadline_seconds",
  "size",
  "suspended",
  "notify_email",
  "next_run_at",
] as const;
export type JobFields = Pick<CronJobRow, (typeof JOB_FIELDS)[number]>;

const encode = (k: string, v: unknown) => (k === "command" ? JSON.stringify(v) : v);

export async function insertJob(q: Queryable, id: string, owner: Owner, accountId: string, f: JobFields) {
  const { rows } = await q.query<CronJobRow>(
    `INSERT INTO cron_jobs (id, owner_kind, owner_id, account_id, ${JOB_FIELDS.join(", ")})
     VALUES ($1, $2, $3, $4, ${JOB_FIELDS.map((_, i) => `$${i + 5}`).join(", ")}) RETURNING *`,
    [id, owner.kind, owner.id, accountId, ...JOB_FIELDS.map((k) => encode(k, f[k]))],
  );
  return rows[0]!;
}

export async function updateJob(q: Queryable, id: string, f: Partial<JobFields>): Promise<CronJobRow> {
  const values: unknown[] = [id];
  const sets = setClauses(Object.fromEntries(JOB_FIELDS.map((k) => [k, f[k]])), values, encode);
  const { rows } = await q.query<CronJobRow>(
    `UPDATE cron_jobs SET ${[...sets, "updated_at = now()"].join(", ")} WHERE id = $1 RETURNING *`,
    values,
  );
  return rows[0]!;
}

export async function removeJob(q: Queryable, id: string): Promise<CronJobRow> {
  const { rows } = await q.query<CronJobRow>(
    `UPDATE cron_jobs SET removed_at = now(), next_run_at = NULL, updated_at = now() WHERE id = $1 RETURNING *`,
    [id],
  );
  return rows[0]!;
}

/** the owner's live cron jobs, found by id or name */
const JOBS = { table: "cron_jobs", refColumn: "name", where: "removed_at IS NULL" };

export const findJob = finderOf<CronJobRow>(JOBS);

export async function jobById(q: Queryable, id: string): Promise<CronJobRow | null> {
  return oneRow<CronJobRow>(q, `SELECT * FROM cron_jobs WHERE id = $1`, [id]);
}

export const listJobs = listerOf<CronJobRow>(JOBS);

/** Jobs whose next instant has come, locked so another process's tick passes them by (it finds the next ones). */
export async function lockDueJobs(q: Queryable, now: Date, limit: number): Promise<CronJobRow[]> {
  return allRows<CronJobRow>(
    q,
    `SELECT * FROM cron_jobs WHERE removed_at IS NULL AND NOT suspended AND next_run_at <= $1
      ORDER BY next_run_at LIMIT $2 FOR UPDATE SKIP LOCKED`,
    [now, limit],
  );
}

export async function runningRuns(q: Queryable, jobId: string): Promise<CronRunRow[]> {
  return allRows<CronRunRow>(q, `SELECT * FROM cron_runs WHERE job_id = $1 AND state = 'running'`, [jobId]);
}

export type NewRun = Pick<CronRunRow, "id" | "job_id" | "scheduled_at" | "trigger" | "state" | "reason" | "size"> & {
  host_id: string | null;
  container: string | null;
};

/** null: this scheduled instant has its row already (another process fired it) */
export async function insertRun(q: Queryable, job: CronJobRow, r: NewRun): Promise<CronRunRow | null> {
  return oneRow<CronRunRow>(
    q,
    `INSERT INTO cron_runs (id, job_id, owner_kind, owner_id, account_id, scheduled_at, trigger, state, reason, size,
       host_id, container, started_at, finished_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12,
       CASE WHEN $8 = 'running' THEN now() END, CASE WHEN $8 <> 'running' THEN now() END)
     ON CONFLICT (job_id, scheduled_at) WHERE trigger = 'schedule' DO NOTHING RETURNING *`,
    [
      r.id,
      job.id,
      job.owner_kind,
      job.owner_id,
      job.account_id,
      r.scheduled_at,
      r.trigger,
      r.state,
      r.reason,
      r.size,
      r.host_id,
      r.container,
    ],
  );
}

/** ends a running run (only once: a run already ended, e.g. cancelled by `replace`, keeps its state but gets its logs) */
export async function finishRun(
  q: Queryable,
  id: string,
  f: { state: RunState; reason: string | null; exitCode: number | null; logs: string },
): Promise<CronRunRow | null> {
  return oneRow<CronRunRow>(
    q,
    `UPDATE cron_runs SET state = CASE WHEN state = 'running' THEN $2 ELSE state END,
        reason = CASE WHEN state = 'running' THEN $3 ELSE reason END,
        exit_code = $4, logs = $5, finished_at = coalesce(finished_at, now())
      WHERE id = $1 RETURNING *`,
    [id, f.state, f.reason, f.exitCode, f.logs],
  );
}

export async function cancelRuns(q: Queryable, ids: string[], reason: string): Promise<void> {
  await q.query(
    `UPDATE cron_runs SET state = 'cancelled', reason = $2, finished_at = now() WHERE id = ANY($1) AND state = 'running'`,
    [ids, reason],
  );
}

export async function runState(q: Queryable, id: string): Promise<RunState | null> {
  const { rows } = await q.query<{ state: RunState }>(`SELECT state FROM cron_runs WHERE id = $1`, [id]);
  return rows[0]?.state ?? null;
}

export async function listRuns(q: Queryable, jobId: string, limit: number): Promise<CronRunRow[]> {
  return allRows<CronRunRow>(
    q,
    `SELECT * FROM cron_runs WHERE job_id = $1 ORDER BY created_at DESC, scheduled_at DESC LIMIT $2`,
    [jobId, limit],
  );
}

export async function findRun(q: Queryable, jobId: string, runId: string): Promise<CronRunRow | null> {
  return oneRow<CronRunRow>(q, `SELECT * FROM cron_runs WHERE job_id = $1 AND id::text = $2`, [jobId, runId]);
}

/** the history is bounded: ended runs beyond the newest `keep` go */
export async function pruneRuns(q: Queryable, jobId: string, keep: number): Promise<void> {
  await q.query(
    `DELETE FROM cron_runs WHERE job_id = $1 AND state <> 'running' AND id NOT IN
       (SELECT id FROM cron_runs WHERE job_id = $1 ORDER BY created_at DESC LIMIT $2)`,
    [jobId, keep],
  );
}

/** running runs that lost their process (a kill -9): their host restarted, or nobody finished them past the deadline */
export async function abandonedRuns(q: Queryable, hostId: string, graceSeconds: number): Promise<CronRunRow[]> {
  return allRows<CronRunRow>(
    q,
    `SELECT r.* FROM cron_runs r JOIN cron_jobs j ON j.id = r.job_id
      WHERE r.state = 'running' AND r.host_id = $1
        AND r.started_at < now() - make_interval(secs => j.deadline_seconds + $2)`,
    [hostId, graceSeconds],
  );
}

/** metering: a running run holds its size's capacity, like a running pod */
export const BILLABLE_RUNS: MeteredTable = { table: "cron_runs", columns: "*", billable: "state = 'running'" };

export async function runNames(q: Queryable, ids: string[]): Promise<{ id: string; name: string }[]> {
  return allRows<{ id: string; name: string }>(
    q,
    `SELECT r.id, j.name FROM cron_runs r JOIN cron_jobs j ON j.id = r.job_id WHERE r.id = ANY($1::uuid[])`,
    [ids],
  );
}
