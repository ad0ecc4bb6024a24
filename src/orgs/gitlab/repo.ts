import { allRows, anyRows, oneRow, type Queryable, returnedIds } from "../../store/db.js";

/** The sealed token's column, the associated data of its ciphertext. */
export const TOKEN_COLUMN = "org_gitlab.token_sealed";

export interface SettingsRow {
  org_id: string;
  base_url: string;
  group_path: string;
  token_sealed: string;
  archive_enabled: boolean;
  gitops_enabled: boolean;
  gitops_repo: string | null;
  gitops_namespace: string | null;
  gitops_host_pattern: string | null;
  gitops_auto_sync: boolean;
  created_at: Date;
  updated_at: Date;
}

export type Settings = Omit<SettingsRow, "created_at" | "updated_at">;

export async function settings(q: Queryable, orgId: string): Promise<SettingsRow | null> {
  return oneRow<SettingsRow>(q, "SELECT * FROM org_gitlab WHERE org_id = $1", [orgId]);
}

/** Organizations whose integration does anything (archive or GitOps on). */
export async function activeSettings(q: Queryable): Promise<SettingsRow[]> {
  return allRows<SettingsRow>(q, "SELECT * FROM org_gitlab WHERE archive_enabled OR gitops_enabled ORDER BY org_id");
}

export async function upsertSettings(q: Queryable, s: Settings): Promise<{ created: boolean }> {
  const { rows } = await q.query<{ created: boolean }>(
    `INSERT INTO org_gitlab (org_id, base_url, group_path, token_sealed, archive_enabled, gitops_enabled, gitops_repo,
       gitops_namespace, gitops_host_pattern, gitops_auto_sync)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
     ON CONFLICT (org_id) DO UPDATE SET base_url = $2, group_path = $3, token_sealed = $4, archive_enabled = $5,
       gitops_enabled = $6, gitops_repo = $7, gitops_namespace = $8, gitops_host_pattern = $9, gitops_auto_sync = $10,
       updated_at = now()
     RETURNING (xmax = 0) AS created`,
    [
      s.org_id,
      s.base_url,
      s.group_path,
      s.token_sealed,
      s.archive_enabled,
      s.gitops_enabled,
      s.gitops_repo,
      s.gitops_namespace,
      s.gitops_host_pattern,
      s.gitops_auto_sync,
    ],
  );
  return rows[0];
}

/** Settings and token go, and what the scan remembered per app (a new integration exports every app again); the history stays. */
export async function deleteSettings(q: Queryable, orgId: string): Promise<boolean> {
  const { rowCount } = await q.query("DELETE FROM org_gitlab WHERE org_id = $1", [orgId]);
  await q.query("DELETE FROM org_git_sync_state WHERE org_id = $1", [orgId]);
  return (rowCount ?? 0) > 0;
}

/**
 * After a settings change: `retarget` queues every app again on the next scan (its revision is forgotten; syncs
 * push only what differs, so this is cheap); `manifestMoved` also forgets the manifest commits, which named
 * another repository's file.
 */
export async function resyncAfterChange(q: Queryable, orgId: string, c: { retarget: boolean; manifestMoved: boolean }) {
  if (!c.retarget && !c.manifestMoved) return;
  await q.query(
    `UPDATE org_git_sync_state SET revision = '', updated_at = now(),
       gitops_commit = CASE WHEN $2 THEN NULL ELSE gitops_commit END,
       polled_commit = CASE WHEN $2 THEN NULL ELSE polled_commit END
      WHERE org_id = $1`,
    [orgId, c.manifestMoved],
  );
}

export type SyncKind = "archive" | "gitops" | "auto_sync";
export type SyncStatus = "queued" | "running" | "succeeded" | "failed" | "skipped";
export type AppKind = "pod" | "pod-group" | "site";

export interface SyncRow {
  id: string;
  org_id: string;
  app_kind: AppKind;
  app_id: string;
  app_slug: string;
  kind: SyncKind;
  status: SyncStatus;
  revision: string | null;
  project_path: string | null;
  commit_id: string | null;
  detail: string | null;
  error: string | null;
  attempts: number;
  job_id: string | null;
  created_at: Date;
  queued_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
}

export interface NewSync {
  id: string;
  orgId: string;
  appKind: AppKind;
  appId: string;
  appSlug: string;
  kind: SyncKind;
  revision: string | null;
  status?: SyncStatus;
  error?: string | null;
}

export async function insertSync(q: Queryable, s: NewSync): Promise<SyncRow> {
  const finished = s.status && s.status !== "queued";
  const { rows } = await q.query<SyncRow>(
    `INSERT INTO org_git_syncs (id, org_id, app_kind, app_id, app_slug, kind, revision, status, error, finished_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, CASE WHEN $10 THEN now() END) RETURNING *`,
    [s.id, s.orgId, s.appKind, s.appId, s.appSlug, s.kind, s.revision, s.status ?? "queued", s.error ?? null, finished],
  );
  return rows[0];
}

export async function listSyncs(q: Queryable, orgId: string, limit: number): Promise<SyncRow[]> {
  return allRows<SyncRow>(
    q,
    "SELECT * FROM org_git_syncs WHERE org_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2",
    [orgId, limit],
  );
}

export async function findSync(q: Queryable, orgId: string, id: string): Promise<SyncRow | null> {
  return oneRow<SyncRow>(q, "SELECT * FROM org_git_syncs WHERE org_id = $1 AND id = $2", [orgId, id]);
}

/** A failed sync queued again; null when it is not failed (anymore). */
export async function requeue(q: Queryable, orgId: string, id: string): Promise<SyncRow | null> {
  return oneRow<SyncRow>(
    q,
    `UPDATE org_git_syncs SET status = 'queued', error = NULL, detail = NULL, started_at = NULL, finished_at = NULL,
       job_id = NULL, queued_at = now()
      WHERE org_id = $1 AND id = $2 AND status = 'failed' RETURNING *`,
    [orgId, id],
  );
}

/**
 * The job's claim: queued → running, one attempt more. A row queued and then given to one job stays that job's:
 * another job for the same row (sent twice) finds it running or queued for a retry under another job and leaves it.
 * The same job id may take it again (its retry after an attempt that died while running).
 */
export async function claim(q: Queryable, id: string, jobId: string): Promise<SyncRow | null> {
  return oneRow<SyncRow>(
    q,
    `UPDATE org_git_syncs SET status = 'running', attempts = attempts + 1, started_at = now(), job_id = $2
      WHERE id = $1 AND (job_id = $2 AND status IN ('queued', 'running') OR job_id IS NULL AND status = 'queued')
      RETURNING *`,
    [id, jobId],
  );
}

/** Queued long ago and never started (the process that queued it stopped before sending its job): sent again. */
export async function staleQueued(q: Queryable, olderThanSeconds: number): Promise<string[]> {
  return returnedIds(
    q,
    `SELECT id::text FROM org_git_syncs WHERE status = 'queued' AND started_at IS NULL
        AND queued_at < now() - make_interval(secs => $1) ORDER BY queued_at LIMIT 500`,
    [olderThanSeconds],
  );
}

export interface Outcome {
  status: SyncStatus;
  error?: string | null;
  detail?: string | null;
  commitId?: string | null;
  projectPath?: string | null;
  revision?: string | null;
}

/** Records an attempt's outcome; `queued` (a retry follows) leaves finished_at empty. */
export async function finish(q: Queryable, id: string, o: Outcome): Promise<void> {
  await q.query(
    `UPDATE org_git_syncs SET status = $2, error = $3, detail = $4, commit_id = COALESCE($5, commit_id),
       project_path = COALESCE($6, project_path), revision = COALESCE($7, revision),
       finished_at = CASE WHEN $2 = 'queued' THEN NULL ELSE now() END
      WHERE id = $1`,
    [id, o.status, o.error ?? null, o.detail ?? null, o.commitId ?? null, o.projectPath ?? null, o.revision ?? null],
  );
}

/** A sync the job queue gave up on (expired, crashed) that no attempt recorded. */
export async function failIfOpen(q: Queryable, id: string, error: string): Promise<void> {
  await q.query(
    `UPDATE org_git_syncs SET status = 'failed', error = $2, finished_at = now()
      WHERE id = $1 AND status IN ('queued', 'running')`,
    [id, error],
  );
}

export interface StateRow {
  app_kind: AppKind;
  app_id: string;
  revision: string;
  gitops_commit: string | null;
  polled_commit: string | null;
}

const STATE = "app_kind, app_id::text, revision, gitops_commit, polled_commit";

export async function states(q: Queryable, orgId: string): Promise<StateRow[]> {
  return allRows<StateRow>(q, `SELECT ${STATE} FROM org_git_sync_state WHERE org_id = $1`, [orgId]);
}

export async function state(q: Queryable, orgId: string, app: { kind: AppKind; id: string }): Promise<StateRow | null> {
  return oneRow<StateRow>(
    q,
    `SELECT ${STATE} FROM org_git_sync_state WHERE org_id = $1 AND app_kind = $2 AND app_id = $3`,
    [orgId, app.kind, app.id],
  );
}

/**
 * Records the app's revision; true only for the caller that changed it (a new app or a new revision), so two scans
 * at once queue one set of syncs.
 */
export async function advanceRevision(q: Queryable, orgId: string, kind: AppKind, appId: string, revision: string) {
  return anyRows(
    q,
    `INSERT INTO org_git_sync_state (org_id, app_kind, app_id, revision) VALUES ($1, $2, $3, $4)
     ON CONFLICT (org_id, app_kind, app_id) DO UPDATE SET revision = EXCLUDED.revision, updated_at = now()
       WHERE org_git_sync_state.revision IS DISTINCT FROM EXCLUDED.revision`,
    [orgId, kind, appId, revision],
  );
}

/** The manifest commit the platform wrote or applied. */
export async function setGitopsCommit(q: Queryable, orgId: string, app: { kind: AppKind; id: string }, commit: string) {
  await q.query(
    `UPDATE org_git_sync_state SET gitops_commit = $4, updated_at = now()
      WHERE org_id = $1 AND app_kind = $2 AND app_id = $3`,
    [orgId, app.kind, app.id, commit],
  );
}

/** The poll's claim of a manifest commit neither written, applied nor queued before: true for one caller only. */
export async function claimPolled(q: Queryable, orgId: string, app: { kind: AppKind; id: string }, commit: string) {
  return anyRows(
    q,
    `UPDATE org_git_sync_state SET polled_commit = $4, updated_at = now()
      WHERE org_id = $1 AND app_kind = $2 AND app_id = $3
        AND gitops_commit IS DISTINCT FROM $4 AND polled_commit IS DISTINCT FROM $4`,
    [orgId, app.kind, app.id, commit],
  );
}

/** Apps that are no longer the organization's (removed, handed to a member): forgotten, so coming back syncs again. */
export async function forgetApps(q: Queryable, orgId: string, keep: { kind: AppKind; id: string }[]): Promise<void> {
  await q.query(
    `DELETE FROM org_git_sync_state s WHERE org_id = $1
       AND NOT EXISTS (SELECT 1 FROM unnest($2::text[], $3::uuid[]) AS k(kind, id) WHERE k.kind = s.app_kind AND k.id = s.app_id)`,
    [orgId, keep.map((k) => k.kind), keep.map((k) => k.id)],
  );
}

/** The organization's row, locked: one settings change at a time. */
export async function lockOrg(q: Queryable, orgId: string): Promise<void> {
  await q.query("SELECT 1 FROM orgs WHERE id = $1 FOR UPDATE", [orgId]);
}
