/**
 * One sync, whatever queued it (README, "GitLab integration and syncs"). Every kind converges: it pushes or applies
 * what is current when it runs (not what was current when it was queued), so a retry of an old sync is harmless.
 * - archive: a static site's live deployment files mirrored to the project `<group>/<slug>` (made when missing);
 * - gitops: the app's manifest written to `<namespace>/<slug>.json` in the GitOps repository;
 * - auto_sync: the manifest in the repository applied to the app.
 * GitLabError (transient or not) is thrown for the job queue's retries; what retrying cannot mend (a broken
 * manifest, a change the platform refuses) is returned as failed.
 */
import { createHash } from "node:crypto";
import { asApiError } from "../../http/errors.js";
import type { SecretBox } from "../../kernel/secrets.js";
import type { Db } from "../../store/db.js";
import { actor, apply, appState, orgApp, type AppsKernel, type OrgApp } from "./apps.js";
import { GitLabClient, GitLabError, type CommitAction, type GitLabProject } from "./client.js";
import {
  buildManifest,
  hostFor,
  manifestPath,
  ManifestError,
  parseManifest,
  render,
  sameManifest,
} from "./manifest.js";
import type { Outbound } from "../../net/outbound.js";
import * as repo from "./repo.js";

export interface RunDeps {
  db: Db;
  kernel: AppsKernel;
  secrets: SecretBox;
  timeoutMs: number;
  /** the guarded client every GitLab request goes through */
  outbound: Outbound;
}

/** One commit's actions stop growing past this much base64 or this many files (the rest goes in the next commit). */
const BATCH_BYTES = 16 * 1024 * 1024;
const BATCH_FILES = 500;

export const clientFor = (d: Pick<RunDeps, "secrets" | "timeoutMs" | "outbound">, s: repo.SettingsRow) =>
  new GitLabClient({
    baseUrl: s.base_url,
    token: d.secrets.open(s.token_sealed, repo.TOKEN_COLUMN),
    timeoutMs: d.timeoutMs,
    outbound: d.outbound,
  });

const skipped = (error: string): repo.Outcome => ({ status: "skipped", error });

/** git's blob id of some bytes (what GitLab's tree lists), to leave unchanged files out of a commit */
const blobId = (b: Buffer) => createHash("sha1").update(`blob ${b.length}\0`).update(b).digest("hex");

export async function runSync(d: RunDeps, row: repo.SyncRow): Promise<repo.Outcome> {
  const s = await repo.settings(d.db, row.org_id);
  if (!s) return skipped("The GitLab integration was removed.");
  const app = await orgApp(d.db, d.kernel, row.org_id, row.app_kind, row.app_id);
  if (!app)
    return skipped(`The ${row.app_kind} ${row.app_slug} is no longer the organization's (removed or handed over).`);
  try {
    if (row.kind === "archive") {
      if (!s.archive_enabled) return skipped("Archiving is turned off.");
      return await archive(d, s, app);
    }
    if (!s.gitops_enabled) return skipped("GitOps is turned off.");
    if (row.kind === "gitops") return await gitops(d, s, app);
    if (!s.gitops_auto_sync) return skipped("GitOps auto-sync is turned off.");
    return await autoSync(d, s, app, row.id);
  } catch (err) {
    if (err instanceof GitLabError) throw err;
    if (err instanceof ManifestError) return { status: "failed", error: err.message };
    const api = asApiError(err);
    if (api) return { status: "failed", error: `The platform refused the change: ${api.message}` };
    throw err;
  }
}

async function archive(d: RunDeps, s: repo.SettingsRow, app: OrgApp): Promise<repo.Outcome> {
  const state = await appState(d.db, d.kernel, s.org_id, app);
  if (!state || state.kind !== "site")
    return skipped(
      "The platform keeps no source of pods and pod groups: a build's source is removed from the build host once " +
        "its image is built. Push the source to GitLab from where it is built.",
    );
  const files = d.kernel.use("staticFiles");
  if (!state.deploymentId || !files) return skipped("The site has no live deployment yet.");
  const gl = clientFor(d, s);
  const group = await gl.group(s.group_path);
  if (!group) throw new GitLabError(`The group ${s.group_path} was not found, or the token cannot see it.`, 404);
  const path = `${group.full_path}/${app.slug}`;
  const project =
    (await gl.project(path)) ??
    (await gl.createProject({
      name: app.slug,
      path: app.slug,
      namespace_id: group.id,
      description: `Files of the static site ${app.slug}, pushed by the hosting platform on every deployment.`,
    }));
  const branch = project.default_branch ?? "main";
  const present = new Map(
    (await gl.tree(project.id, branch)).filter((e) => e.type === "blob").map((e) => [e.path, e.id]),
  );
  const manifest = await files.manifest(d.db, state.deploymentId);
  const counts = { create: 0, update: 0, delete: 0 };
  let batch: CommitAction[] = [];
  let bytes = 0;
  let commitId: string | null = null;
  let part = 0;
  const flush = async () => {
    if (!batch.length) return;
    part++;
    const commit_message = `Deployment ${state.deploymentId} of ${app.slug}${part > 1 ? ` (part ${part})` : ""}`;
    commitId = (await gl.commit(project.id, { branch, commit_message, actions: batch })).id;
    batch = [];
    bytes = 0;
  };
  const add = async (a: CommitAction) => {
    counts[a.action]++;
    batch.push(a);
    bytes += a.content?.length ?? 0;
    if (bytes >= BATCH_BYTES || batch.length >= BATCH_FILES) await flush();
  };
  for (const [filePath, entry] of [...manifest].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const content = await files.content(d.db, entry.hash);
    if (!content) throw new Error(`content ${entry.hash} of ${filePath} is missing from the store`);
    const known = present.get(filePath);
    if (known === blobId(content)) continue;
    await add({
      action: known ? "update" : "create",
      file_path: filePath,
      content: content.toString("base64"),
      encoding: "base64",
    });
  }
  for (const filePath of present.keys())
    if (!manifest.has(filePath)) await add({ action: "delete", file_path: filePath });
  await flush();
  const changed = counts.create + counts.update + counts.delete;
  return {
    status: "succeeded",
    projectPath: project.path_with_namespace,
    commitId,
    revision: state.deploymentId,
    detail: changed
      ? `${manifest.size} files of deployment ${state.deploymentId}: ${counts.create} created, ${counts.update} updated, ${counts.delete} deleted.`
      : `The project already holds the ${manifest.size} files of deployment ${state.deploymentId}.`,
  };
}

/** The GitOps repository: a full path, or a project of the group; one of the group is made when missing. */
export async function gitopsProject(gl: GitLabClient, s: repo.SettingsRow): Promise<GitLabProject> {
  const repoPath = s.gitops_repo!.includes("/") ? s.gitops_repo! : `${s.group_path}/${s.gitops_repo}`;
  const found = await gl.project(repoPath);
  if (found) return found;
  const parent = repoPath.slice(0, repoPath.lastIndexOf("/"));
  const group = parent.toLowerCase() === s.group_path.toLowerCase() ? await gl.group(s.group_path) : null;
  if (!group)
    throw new GitLabError(`The GitOps repository ${repoPath} was not found, or the token cannot see it.`, 404);
  const name = repoPath.slice(parent.length + 1);
  return gl.createProject({
    name,
    path: name,
    namespace_id: group.id,
    description: "Deploy manifests of the organization's apps.",
  });
}

const decode = (base64: string) => Buffer.from(base64, "base64").toString("utf8");

async function gitops(d: RunDeps, s: repo.SettingsRow, app: OrgApp): Promise<repo.Outcome> {
  const state = await appState(d.db, d.kernel, s.org_id, app);
  if (!state) return skipped(`The ${app.kind} ${app.slug} cannot be described now (removed?).`);
  if (state.kind === "site" && !state.deploymentId) return skipped("The site has no live deployment yet.");
  const ns = s.gitops_namespace!;
  const manifest = buildManifest(app, state, { namespace: ns, host: hostFor(s.gitops_host_pattern!, app.slug, ns) });
  const gl = clientFor(d, s);
  const project = await gitopsProject(gl, s);
  const branch = project.default_branch ?? "main";
  const filePath = manifestPath(ns, app.slug);
  const file = await gl.file(project.id, filePath, branch);
  const base = { projectPath: project.path_with_namespace };
  if (file && s.gitops_auto_sync) {
    const known = await repo.state(d.db, s.org_id, app);
    if (known?.gitops_commit && known.gitops_commit !== file.last_commit_id)
      return {
        ...base,
        status: "skipped",
        error: `The repository has a manifest change (commit ${file.last_commit_id}) not applied yet; with auto-sync the repository wins and applies it.`,
      };
  }
  if (file && sameManifest(decode(file.content), manifest)) {
    await repo.setGitopsCommit(d.db, s.org_id, app, file.last_commit_id);
    return { ...base, status: "succeeded", commitId: file.last_commit_id, detail: `${filePath} is up to date.` };
  }
  const commit = await gl.commit(project.id, {
    branch,
    commit_message: `${app.slug}: ${state.kind === "site" ? `deployment ${state.deploymentId}` : state.spec.image}`,
    actions: [{ action: file ? "update" : "create", file_path: filePath, content: render(manifest) }],
  });
  await repo.setGitopsCommit(d.db, s.org_id, app, commit.id);
  return { ...base, status: "succeeded", commitId: commit.id, detail: `${file ? "Updated" : "Created"} ${filePath}.` };
}

async function autoSync(d: RunDeps, s: repo.SettingsRow, app: OrgApp, syncId: string): Promise<repo.Outcome> {
  const gl = clientFor(d, s);
  const project = await gitopsProject(gl, s);
  const filePath = manifestPath(s.gitops_namespace!, app.slug);
  const file = await gl.file(project.id, filePath, project.default_branch ?? "main");
  const base = { projectPath: project.path_with_namespace };
  if (!file) return { ...base, status: "skipped", error: `${filePath} is not in the repository; nothing to apply.` };
  const outcome = { ...base, commitId: file.last_commit_id, revision: file.last_commit_id };
  const want = parseManifest(app.kind, decode(file.content));
  const now = await appState(d.db, d.kernel, s.org_id, app);
  if (!now)
    return { ...outcome, status: "skipped", error: `The ${app.kind} ${app.slug} cannot be described now (removed?).` };
  const changes = await apply(d.kernel, (action) => actor(s.org_id, app, action, `git-sync:${syncId}`), app, now, want);
  await repo.setGitopsCommit(d.db, s.org_id, app, file.last_commit_id);
  const detail = changes.length ? `Applied ${changes.join("; ")}.` : "The app already matches the manifest.";
  return { ...outcome, status: "succeeded", detail };
}
