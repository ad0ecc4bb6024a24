import { createHash, randomBytes, randomUUID, timingSafeEqual } from "node:crypto";
import type { Db } from "../store/db.js";
import { inTransaction } from "../store/db.js";
import type { JobQueue } from "../jobs/queue.js";
import type { SecretBox } from "../kernel/secrets.js";
import type { Principal } from "../auth/principal.js";
import { ownerColumnsOf, type Owner } from "../kernel/owner.js";
import type { Outbound } from "../net/outbound.js";
import { auditedTransaction } from "../audit/record.js";
import { ApiError, notFound } from "../http/errors.js";
import { isUniqueViolation } from "../store/db.js";
import { normalizeBaseUrl, PreviewGitLabError } from "./gitlab.js";
import { findBranchableDatabase } from "../databases/public.js";
import type { Platform } from "../kernel/context.js";
import * as repo from "./repo.js";

export const RECONCILE_JOB = "previews.reconcile";
export const SWEEP_JOB = "previews.sweep";

/** the pod's URL: `<slug>.<apps domain>` (the same rule as the apps area's view) */
export interface PreviewUrls {
  appsDomain: string;
  edgePort: number;
  /** where GitLab reaches this platform (the webhook URL) */
  publicBase: string;
}

export interface PreviewsDeps {
  db: Db;
  /** the platform, for the databases area's branches (src/databases/public.ts) */
  platform: Platform;
  jobs: Pick<JobQueue, "send">;
  secrets: SecretBox;
  outbound: Outbound;
  urls: PreviewUrls;
}

export interface LinkInput {
  base_url: string;
  project: string;
  token: string;
  app_name: string;
  dockerfile?: string;
  port?: number | null;
  size?: string;
  env?: Record<string, string>;
  database?: string | null;
  idle_stop_seconds?: number | null;
  max_age_seconds?: number;
}

/** Vercel/Render keep previews until the PR closes; a week's cap keeps a forgotten one from paying forever. */
export const DEFAULT_MAX_AGE_SECONDS = 7 * 86_400;
/** a preview nobody looks at for 15 minutes stops (scale-to-zero) and wakes on the next request */
export const DEFAULT_IDLE_STOP_SECONDS = 900;

const hashSecret = (s: string) => createHash("sha256").update(s).digest();

export const previewSlug = (app: string, iid: number) => `${app}-mr-${iid}`;

export function previewUrl(urls: PreviewUrls, slug: string): string {
  return `http://${slug}.${urls.appsDomain}${urls.edgePort === 80 ? "" : `:${urls.edgePort}`}`;
}

export const webhookUrl = (urls: PreviewUrls, linkId: string) =>
  `${urls.publicBase}/v1/previews/gitlab/webhook?link=${linkId}`;

/** A merge-request or push event as GitLab sends it (the parts previews read). */
export interface GitLabHook {
  object_kind?: string;
  ref?: string;
  after?: string;
  checkout_sha?: string | null;
  object_attributes?: {
    iid?: number;
    action?: string;
    state?: string;
    source_branch?: string;
    oldrev?: string;
    last_commit?: { id?: string };
  };
}

/** Links (who previews what) and the intake of GitLab's webhooks; the jobs (jobs.ts) do the work. */
export function previewsService(deps: PreviewsDeps) {
  const { db, secrets } = deps;

  async function createLink(p: Principal, input: LinkInput) {
    let baseUrl: string;
    try {
      baseUrl = normalizeBaseUrl(input.base_url);
      // a name that resolves slowly is not waited for: every request to GitLab is checked again anyway
      await Promise.race([deps.outbound.check(baseUrl), new Promise((resolve) => setTimeout(resolve, 2000).unref())]);
    } catch (err) {
      const forbidden = (err as { reason?: string }).reason === "forbidden";
      if (forbidden) throw new ApiError("destination_forbidden", (err as Error).message);
      if (err instanceof PreviewGitLabError) throw new ApiError("invalid_request", err.message);
      throw new ApiError("invalid_request", `base_url: ${(err as Error).message}`);
    }
    // each merge request gets a branch of this database (jobs.ts): it must be the owner's, and is kept by id
    const databaseId = input.database ? await findBranchableDatabase(deps.platform, p, input.database) : null;
    if (input.database && !databaseId) throw notFound("database");
    const secret = randomBytes(24).toString("base64url");
    const id = randomUUID();
    try {
      const link = await auditedTransaction(db, p, (tx) =>
        repo.insertLink(tx, {
          id,
          ...ownerColumnsOf(p),
          base_url: baseUrl,
          project: input.project,
          token_sealed: secrets.seal(input.token, repo.TOKEN_COLUMN),
          secret_hash: hashSecret(secret),
          app_name: input.app_name,
          dockerfile: input.dockerfile ?? "Dockerfile",
          port: input.port === undefined ? 8080 : input.port,
          size: input.size ?? "nano",
          env_sealed: secrets.seal(JSON.stringify(input.env ?? {}), repo.ENV_COLUMN),
          database_id: databaseId,
          idle_stop_seconds:
            input.idle_stop_seconds === undefined ? DEFAULT_IDLE_STOP_SECONDS : input.idle_stop_seconds,
          max_age_seconds: input.max_age_seconds ?? DEFAULT_MAX_AGE_SECONDS,
        }),
      );
      return { link, secret };
    } catch (err) {
      if (isUniqueViolation(err))
        throw new ApiError("conflict", `A project is already linked for previews of app "${input.app_name}".`);
      throw err;
    }
  }

  const listLinks = (owner: Owner) => repo.listLinks(db, owner);

  /** Unlinks: every preview of the project is removed by the jobs (pod, branch, URL); the link row goes after. */
  async function deleteLink(p: Principal, id: string) {
    const closed = await auditedTransaction(db, p, async (tx) => {
      const link = await repo.findLink(tx, p.owner, id);
      if (!link) throw notFound("preview link");
      return repo.unlink(tx, link.id);
    });
    for (const row of closed) await deps.jobs.send(RECONCILE_JOB, { id: row.id });
    return { deleted: true, previews_removing: closed.length };
  }

  const listPreviews = (owner: Owner) => repo.listPreviews(db, owner);
  async function getPreview(owner: Owner, id: string) {
    const [row] = await repo.listPreviews(db, owner, id);
    if (!row) throw notFound("preview");
    return row;
  }

  /**
   * A webhook delivery: the link's secret is checked in constant time (hashes of equal length), then the intent is
   * recorded and a job queued. Unknown link, missing or wrong secret: the same 401, nothing recorded.
   */
  async function webhook(
    linkId: string | undefined,
    token: string | undefined,
    event: string | undefined,
    hook: GitLabHook,
  ) {
    const link = linkId ? await repo.linkById(db, linkId) : null;
    const given = hashSecret(token ?? "");
    const expected = link?.secret_hash ?? hashSecret(randomBytes(16).toString("hex"));
    if (!link || !token || link.deleted_at || !timingSafeEqual(given, expected))
      throw new ApiError(
        "webhook_secret_invalid",
        "The X-Gitlab-Token header does not match this link's webhook secret.",
      );
    const touched = await inTransaction(db, (tx) => intake(tx, link, event, hook));
    for (const row of touched) await deps.jobs.send(RECONCILE_JOB, { id: row.id });
    return { accepted: touched.length > 0, previews: touched.map((r) => r.id) };
  }

  async function intake(
    tx: Parameters<typeof repo.recordIntent>[0],
    link: repo.LinkRow,
    event: string | undefined,
    hook: GitLabHook,
  ) {
    const kind =
      hook.object_kind ?? (event === "Push Hook" ? "push" : event === "Merge Request Hook" ? "merge_request" : "");
    if (kind === "push") {
      const branch = hook.ref?.startsWith("refs/heads/") ? hook.ref.slice("refs/heads/".length) : null;
      const sha = hook.checkout_sha ?? hook.after ?? "";
      // a deleted branch pushes all zeros: its merge request's close event removes the preview
      if (!branch || !/^[0-9a-f]{7,64}$/.test(sha) || /^0+$/.test(sha)) return [];
      const out: repo.PreviewRow[] = [];
      for (const row of await repo.openOnBranch(tx, link.id, branch)) {
        if (row.sha === sha) continue;
        const r = await repo.recordIntent(tx, {
          ...{ id: row.id, linkId: link.id, iid: row.mr_iid, desired: "open", branch, sha, slug: row.slug },
        });
        if (r) out.push(r);
      }
      return out;
    }
    if (kind !== "merge_request") return [];
    const a = hook.object_attributes ?? {};
    if (typeof a.iid !== "number" || !Number.isInteger(a.iid) || a.iid < 1)
      throw new ApiError("invalid_request", "object_attributes.iid must be the merge request's number.");
    const slug = previewSlug(link.app_name, a.iid);
    const base = { id: randomUUID(), linkId: link.id, iid: a.iid, slug };
    if (a.action === "close" || a.action === "merge") {
      const r = await repo.recordIntent(tx, { ...base, desired: "closed", branch: "", sha: "" });
      return r ? [r] : [];
    }
    // open, reopen and update (a new commit, or any other change: harmless, the sha decides) want a preview
    if (a.action !== "open" && a.action !== "reopen" && a.action !== "update") return [];
    if (a.state && a.state !== "opened") return [];
    const sha = a.last_commit?.id ?? "";
    if (!a.source_branch || !/^[0-9a-f]{7,64}$/.test(sha))
      throw new ApiError("invalid_request", "object_attributes needs source_branch and last_commit.id.");
    const r = await repo.recordIntent(tx, { ...base, desired: "open", branch: a.source_branch, sha });
    return r ? [r] : [];
  }

  return { createLink, listLinks, deleteLink, listPreviews, getPreview, webhook };
}

export type PreviewsService = ReturnType<typeof previewsService>;
