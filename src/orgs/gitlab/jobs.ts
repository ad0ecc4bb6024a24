/**
 * The two jobs of the GitLab integration (README, "GitLab integration and syncs"):
 * - `orgs.git-scan` (every minute): the platform has no event bus, so "an app was deployed or updated" is a change
 *   of the app's revision (a site's live deployment, a digest of a pod's or group's spec) against the one recorded
 *   in org_git_sync_state; a change (or an app not seen before) queues its syncs. With auto-sync it also polls each
 *   synced app's manifest file in the GitOps repository and queues an auto_sync for a commit not written, applied
 *   or queued before. Needs nothing from other areas and survives restarts (the state is in the store).
 * - `orgs.git-sync` (one sync row): runs it with retries and back-off; the last failure is recorded as failed.
 */
import { randomUUID } from "node:crypto";
import type { FastifyBaseLogger } from "fastify";
import type { JobSpec } from "../../kernel/contracts.js";
import type { JobQueue } from "../../jobs/queue.js";
import { inTransaction } from "../../store/db.js";
import { appState, orgApps, revisionOf, type OrgApp } from "./apps.js";
import { GitLabError } from "./client.js";
import { manifestPath } from "./manifest.js";
import * as repo from "./repo.js";
import { clientFor, gitopsProject, runSync, type RunDeps } from "./sync-run.js";
import { everyMinute } from "../../kernel/periodic.js";

export const GIT_SYNC_JOB = "orgs.git-sync";
export const GIT_SCAN_JOB = "orgs.git-scan";

export interface GitJobDeps extends RunDeps {
  jobs: Pick<JobQueue, "send">;
  log: FastifyBaseLogger;
  /** retries of a failing sync after its first attempt (GITLAB_SYNC_RETRIES) */
  retries: number;
}

const ARCHIVE_SKIP =
  "The platform keeps no source of pods and pod groups: a build's source is removed from the build host once its " +
  "image is built. Push the source to GitLab from where it is built.";

export const queueSync = (jobs: Pick<JobQueue, "send">, id: string) => jobs.send(GIT_SYNC_JOB, { syncId: id });

/** Runs one sync row: a failed attempt goes back to queued (with its error) while retries remain, then failed. */
export async function syncHandler(d: GitJobDeps, syncId: string, job: { id: string; retryCount: number }) {
  const row = await repo.claim(d.db, syncId, job.id);
  if (!row) return;
  try {
    await repo.finish(d.db, row.id, await runSync(d, row));
  } catch (err) {
    const error = err instanceof GitLabError ? err.message : `internal error: ${String(err)}`;
    if (!(err instanceof GitLabError)) d.log.error({ err, sync: row.id }, "git sync failed unexpectedly");
    const last = job.retryCount >= d.retries;
    await repo.finish(d.db, row.id, { status: last ? "failed" : "queued", error });
    if (!last) throw err;
  }
}

async function queueFor(d: GitJobDeps, s: repo.SettingsRow, app: OrgApp, revision: string): Promise<string[]> {
  return inTransaction(d.db, async (tx) => {
    if (!(await repo.advanceRevision(tx, s.org_id, app.kind, app.id, revision))) return [];
    const base = { orgId: s.org_id, appKind: app.kind, appId: app.id, appSlug: app.slug, revision };
    const queued: string[] = [];
    if (s.archive_enabled) {
      const skip = app.kind !== "site";
      const row = await repo.insertSync(tx, {
        ...base,
        id: randomUUID(),
        kind: "archive",
        ...(skip ? { status: "skipped" as const, error: ARCHIVE_SKIP } : {}),
      });
      if (!skip) queued.push(row.id);
    }
    if (s.gitops_enabled) queued.push((await repo.insertSync(tx, { ...base, id: randomUUID(), kind: "gitops" })).id);
    return queued;
  });
}

/** Auto-sync's poll: each synced app's manifest file; a commit the platform did not write or apply queues an auto_sync. */
async function poll(d: GitJobDeps, s: repo.SettingsRow, apps: OrgApp[]): Promise<string[]> {
  const known = new Map((await repo.states(d.db, s.org_id)).map((r) => [`${r.app_kind}:${r.app_id}`, r]));
  const synced = apps.filter((a) => known.get(`${a.kind}:${a.id}`)?.gitops_commit);
  if (!synced.length) return [];
  const gl = clientFor(d, s);
  const project = await gitopsProject(gl, s);
  const queued: string[] = [];
  for (const app of synced) {
    const st = known.get(`${app.kind}:${app.id}`)!;
    const file = await gl.file(
      project.id,
      manifestPath(s.gitops_namespace!, app.slug),
      project.default_branch ?? "main",
    );
    if (!file || file.last_commit_id === st.gitops_commit || file.last_commit_id === st.polled_commit) continue;
    const id = await inTransaction(d.db, async (tx) => {
      if (!(await repo.claimPolled(tx, s.org_id, app, file.last_commit_id))) return null;
      const base = { orgId: s.org_id, appKind: app.kind, appId: app.id, appSlug: app.slug };
      return (
        await repo.insertSync(tx, { ...base, id: randomUUID(), kind: "auto_sync", revision: file.last_commit_id })
      ).id;
    });
    if (id) queued.push(id);
  }
  return queued;
}

/** One pass over every organization with an active integration; the number of syncs queued. */
export async function scanOnce(d: GitJobDeps): Promise<number> {
  let count = 0;
  for (const id of await repo.staleQueued(d.db, 600)) await queueSync(d.jobs, id);
  for (const s of await repo.activeSettings(d.db)) {
    try {
      const apps = await orgApps(d.db, d.kernel, s.org_id);
      const queued: string[] = [];
      for (const app of apps) {
        const state = await appState(d.db, d.kernel, s.org_id, app).catch((err) => {
          d.log.warn({ err, app: app.id }, "git scan: app not described");
          return null;
        });
        const revision = state && revisionOf(state);
        if (revision) queued.push(...(await queueFor(d, s, app, revision)));
      }
      await repo.forgetApps(d.db, s.org_id, apps);
      if (s.gitops_enabled && s.gitops_auto_sync) {
        // GitLab unreachable: nothing recorded (no history row a minute); the next pass polls again
        queued.push(
          ...(await poll(d, s, apps).catch((err) => {
            d.log.warn({ err, org: s.org_id }, "git scan: GitOps repository not polled");
            return [];
          })),
        );
      }
      for (const id of queued) await queueSync(d.jobs, id);
      count += queued.length;
    } catch (err) {
      d.log.error({ err, org: s.org_id }, "git scan failed for an organization");
    }
  }
  return count;
}

export function gitJobs(d: GitJobDeps): JobSpec<{ syncId: string }>[] {
  return [
    {
      name: GIT_SYNC_JOB,
      retryLimit: d.retries,
      expireInSeconds: 30 * 60,
      concurrency: 2,
      handler: async (data: { syncId: string }, job) => syncHandler(d, data.syncId, job),
      onFinalFailure: async (data: { syncId: string }, message) =>
        repo.failIfOpen(d.db, data.syncId, `The sync did not finish: ${message}`),
    },
    everyMinute(GIT_SCAN_JOB, () => scanOnce(d), { expireInSeconds: 15 * 60 }),
  ];
}
