import type { FastifyBaseLogger } from "fastify";
import type { Db } from "../store/db.js";
import { inTransaction } from "../store/db.js";
import { xactLock } from "../store/locks.js";
import type { JobQueue } from "../jobs/queue.js";
import type { Kernel } from "../kernel/kernel.js";
import type { SecretBox } from "../kernel/secrets.js";
import type { JobSpec } from "../kernel/contracts.js";
import type { Outbound } from "../net/outbound.js";
import type { Principal } from "../auth/principal.js";
import { creatorPrincipal } from "../auth/creator-principal.js";
import { asApiError } from "../http/errors.js";
import { archiveTopFolder, PreviewGitLab, PreviewGitLabError } from "./gitlab.js";
import { previewUrl, RECONCILE_JOB, SWEEP_JOB, type PreviewUrls } from "./service.js";
import * as repo from "./repo.js";
import { recordEvent, type EventType } from "../events/public.js";
import { createDatabaseBranch, deleteDatabaseBranch, getDatabaseBranch } from "../databases/public.js";
import type { Platform } from "../kernel/context.js";

export interface PreviewJobDeps {
  db: Db;
  /** the platform, for the databases area's branches (src/databases/public.ts) */
  platform: Platform;
  kernel: Pick<Kernel, "use">;
  jobs: Pick<JobQueue, "send">;
  secrets: SecretBox;
  outbound: Outbound;
  log: FastifyBaseLogger;
  urls: PreviewUrls;
  timeoutMs: number;
  /** seconds between looks at a build in progress */
  pollSeconds: number;
}

/** how long a preview may sit unsettled before the sweep sends its job again (a job lost to a kill -9) */
const STALE_SECONDS = 60;
const RUNNING_BUILD = new Set(["awaiting_upload", "queued", "building", "pushing"]);

/** The link's account acting for its owner: admission, deploy rules and budgets judge previews as theirs. */
function actor(link: repo.LinkRow, preview: repo.PreviewRow, action: string): Principal {
  return creatorPrincipal(link, "GitLab preview", {
    action,
    target: preview.id,
    ip: "gitlab-preview",
    requestId: `preview-${preview.id}`,
    status: 200,
  });
}

/**
 * One preview brought to what its merge request wants, one step per run, each idempotent (kill -9 safe: the row says
 * where it stands; a step repeated finds its work done): fetch the commit's archive and start its build; follow the
 * build; create the pod (or roll it to the new image through the safe rollout); post the URL to the merge request.
 * With a linked database, a branch of it per merge request is made first and attached to the pod (DATABASE_URL).
 * Closed: the pod and the database branch removed.
 */
export function previewJobs(d: PreviewJobDeps): JobSpec<any>[] {
  const again = (id: string, seconds = d.pollSeconds) =>
    d.jobs.send(RECONCILE_JOB, { id }, { startAfterSeconds: seconds });

  function gitlabOf(link: repo.LinkRow) {
    return new PreviewGitLab({
      baseUrl: link.base_url,
      token: d.secrets.open(link.token_sealed, repo.TOKEN_COLUMN),
      project: link.project,
      timeoutMs: d.timeoutMs,
      outbound: d.outbound,
    });
  }

  /** a preview's step recorded with its event in one transaction (src/events: the event exists when the change does) */
  async function settle(link: repo.LinkRow, row: repo.PreviewRow, patch: Partial<repo.PreviewRow>, type?: EventType) {
    await inTransaction(d.db, async (tx) => {
      const now = await repo.setPreview(tx, row.id, patch);
      if (!type) return;
      const owner = { kind: link.owner_kind, id: link.owner_id };
      const data = {
        app_name: link.app_name,
        merge_request_iid: now.mr_iid,
        state: now.state,
        url: previewUrl(d.urls, now.slug),
      };
      await recordEvent(tx, {
        type,
        owner,
        resource: { kind: "preview", id: row.id },
        data: { ...data, commit: now.deployed_sha, error: now.error },
      });
    });
  }

  async function remove(link: repo.LinkRow, row: repo.PreviewRow) {
    if (row.state === "removed") return;
    const apps = d.kernel.use("appImages");
    if (row.pod_id && apps?.removePod) await apps.removePod(actor(link, row, "previewRemovePod"), row.pod_id);
    if (row.db_branch_id)
      await deleteDatabaseBranch(d.platform, actor(link, row, "previewRemoveBranch"), row.db_branch_id);
    await settle(link, row, { state: "removed", pod_id: null, db_branch_id: null }, "preview.deleted");
  }

  async function fail(row: repo.PreviewRow, error: string) {
    const link = await repo.linkById(d.db, row.link_id);
    if (link) await settle(link, row, { state: "failed", error }, "preview.failed");
  }

  async function step(id: string): Promise<void> {
    let row = await repo.previewById(d.db, id);
    const link = row && (await repo.linkById(d.db, row.link_id));
    if (!row || !link) return;
    if (row.desired === "closed") return remove(link, row);
    if (row.state === "failed") return;
    if (row.state === "running" && row.deployed_sha === row.sha) return postNote(link, row);
    const builds = d.kernel.use("sourceBuilds");
    const apps = d.kernel.use("appImages");
    if (!builds || !apps?.createPod) return fail(row, "This platform has no builds or apps area to run previews.");
    const p = actor(link, row, "previewDeploy");

    // the merge request's database branch, a copy of the linked database made while the build runs; named after the
    // preview, so a run that died before recording it finds it again
    if (link.database_id && !row.db_branch_id) {
      const branch = await createDatabaseBranch(d.platform, p, link.database_id, { name: row.slug });
      await repo.setPreview(d.db, row.id, { db_branch_id: branch.id });
      row = { ...row, db_branch_id: branch.id };
    }
    if (!row.build_id || row.build_sha !== row.sha) {
      const archive = await gitlabOf(link).archive(row.sha);
      const build = await builds.fromArchive(p, {
        archive,
        dockerfile: link.dockerfile,
        contextPath: archiveTopFolder(archive),
      });
      await repo.setPreview(d.db, row.id, { build_id: build.id, build_sha: row.sha, error: null });
      return void (await again(row.id));
    }
    const build = await builds.progress(p, row.build_id);
    if (!build) return fail(row, `The build ${row.build_id} is gone.`);
    if (RUNNING_BUILD.has(build.status)) return void (await again(row.id));
    if (build.status !== "succeeded" || !build.image)
      return fail(row, `The build of ${row.sha.slice(0, 8)} ${build.status}: ${build.reason ?? "no image"}.`);

    if (row.db_branch_id) {
      // the pod starts once its database is there: DATABASE_URL then answers
      const branch = await getDatabaseBranch(d.platform, p, row.db_branch_id);
      if (!branch) return fail(row, "The preview's database branch was deleted.");
      if (branch.state === "failed") return fail(row, `The database branch failed: ${branch.statusReason ?? ""}`);
      if (branch.state !== "running") return void (await again(row.id));
    }
    await repo.setPreview(d.db, row.id, { state: "deploying" });
    let podId = row.pod_id;
    if (!podId) {
      // a pod made by a run that died before recording it is found by its slug
      const found = await apps.find(p, row.slug);
      if (found?.kind === "pod") podId = found.id;
    }
    if (podId) await apps.deploy(p, { kind: "pod", id: podId, slug: row.slug }, build.image);
    else {
      const env = JSON.parse(d.secrets.open(link.env_sealed, repo.ENV_COLUMN)) as Record<string, string>;
      const pod = await apps.createPod(p, {
        ...{ name: row.slug, slug: row.slug, image: build.image, port: link.port, size: link.size },
        ...{ env, secretEnv: {}, idleStopSeconds: link.idle_stop_seconds },
        // the branch is attached: its DATABASE_URL (and PG*) reach the pod as for any attached database
        ...(row.db_branch_id ? { databases: [row.db_branch_id] } : {}),
      });
      podId = pod.id;
    }
    const now = await repo.previewById(d.db, row.id);
    const settled = now?.desired === "open" && now.sha === row.build_sha;
    const deployed = { pod_id: podId, deployed_sha: row.build_sha, state: settled ? "running" : "building" } as const;
    await settle(link, row, deployed, settled ? "preview.ready" : undefined);
    if (!settled) return void (await again(row.id, 0));
    await postNote(link, { ...row, deployed_sha: row.build_sha });
  }

  /** The URL, once per preview, as a merge-request note (Vercel's bot comment); the URL stays the same after. */
  async function postNote(link: repo.LinkRow, row: repo.PreviewRow) {
    if (row.note_posted_sha !== null || !row.deployed_sha) return;
    const url = previewUrl(d.urls, row.slug);
    await gitlabOf(link).note(row.mr_iid, `Preview environment: ${url} (commit ${row.deployed_sha.slice(0, 8)}).`);
    await repo.setPreview(d.db, row.id, { note_posted_sha: row.deployed_sha });
  }

  /** one run at a time per preview (a webhook, a poll and the sweep may send it together) */
  async function reconcile(id: string) {
    try {
      await inTransaction(d.db, async (tx) => {
        await xactLock(tx, `preview:${id}`);
        await step(id);
      });
    } catch (err) {
      const api = asApiError(err);
      const row = await repo.previewById(d.db, id);
      // refusals (admission, deploy rules, budgets, a bad Dockerfile) are final until the next commit; others retry
      if (row?.desired === "closed") throw err;
      if (row && api && api.status < 500) return fail(row, `${api.code}: ${api.message}`);
      // GitLab refusing the archive is final until the next commit; a note that did not go out is retried
      if (row && err instanceof PreviewGitLabError && row.state !== "running") return fail(row, err.message);
      if (row) await repo.setPreview(d.db, row.id, { error: (err as Error).message.slice(0, 500) });
      throw err;
    }
  }

  async function sweep() {
    for (const row of await repo.needingWork(d.db, STALE_SECONDS)) {
      await repo.expire(d.db, row.id);
      await d.jobs.send(RECONCILE_JOB, { id: row.id });
    }
    await repo.dropFinishedLinks(d.db);
  }

  return [
    { name: RECONCILE_JOB, retryLimit: 5, expireInSeconds: 600, handler: async (data) => reconcile(String(data.id)) },
    { name: SWEEP_JOB, cron: "* * * * *", retryLimit: 0, policy: "stately", handler: sweep },
  ];
}
