/**
 * What other areas may use of databases without reading its tables: database branches, made and deleted as the
 * principal would through `POST /v1/databases/{id}/branches` and `DELETE /v1/databases/{id}` (same checks, admission,
 * audit and billing). Preview environments (src/previews) make one per merge request.
 */
import { isUniqueViolation } from "../store/db.js";
import { ApiError } from "../http/errors.js";
import type { Principal } from "../auth/principal.js";
import type { Platform } from "../kernel/context.js";
import type { DatabasesState } from "./state.js";
import { databasesService, type DatabasesService } from "./service.js";
import { appsSide } from "./attachments.js";
import type * as repo from "./repo.js";

/** A branch as another area sees it; `state` is the instance's (creating until the copy is made, then running). */
export interface DatabaseBranchRef {
  id: string;
  slug: string;
  parentId: string;
  state: string;
  statusReason: string | null;
}

// one service per platform (its list cache follows the platform's change feed), built on first use
const services = new WeakMap<Platform, DatabasesService>();
function serviceOf(platform: Platform): DatabasesService {
  let svc = services.get(platform);
  if (!svc) {
    const state = platform.state<DatabasesState>("databases");
    svc = databasesService({
      db: platform.db,
      config: platform.config,
      restoreEnabled: state.restoreEnabled,
      jobs: platform.jobs,
      provider: state.provider,
      admission: platform.kernel,
      poolAvailable: state.poolAvailable,
      changes: platform.changes,
      secrets: platform.secrets,
      hosts: platform.kernel.require("hosts"),
      apps: appsSide(platform.kernel),
    });
    services.set(platform, svc);
  }
  return svc;
}

const refOf = (row: repo.DatabaseRow): DatabaseBranchRef => ({
  id: row.id,
  slug: row.slug,
  parentId: row.parent_id!,
  state: row.state,
  statusReason: row.status_reason,
});

/** The principal's database by id or slug (not deleted), as an id to branch later; null when there is none. */
export async function findBranchableDatabase(platform: Platform, p: Principal, ref: string): Promise<string | null> {
  const row = await serviceOf(platform)
    .get(p, ref)
    .catch(() => null);
  return row && row.state !== "removed" && row.desired_state !== "removed" ? row.id : null;
}

/**
 * A branch of `parentRef` now (or at `at`), named `name`. Idempotent by name: a live branch of that parent under that
 * slug (made by a job that died before recording it) is answered as it is. A slug still held by a deleted branch
 * (kept 7 days) moves on to `<name>-2`, `-3`, … so a merge request reopened after its close gets a branch again.
 */
export async function createDatabaseBranch(
  platform: Platform,
  p: Principal,
  parentRef: string,
  input: { name?: string; at?: string } = {},
): Promise<DatabaseBranchRef> {
  const svc = serviceOf(platform);
  if (!input.name) return refOf((await svc.createBranch(p, parentRef, input)).row);
  const parent = await svc.get(p, parentRef);
  for (let k = 1; k <= 20; k++) {
    const name = k === 1 ? input.name : `${input.name.slice(0, 37)}-${k}`;
    const held = await svc.get(p, name).catch(() => null);
    if (held?.parent_id === parent.id && held.desired_state !== "removed") return refOf(held);
    if (held?.parent_id === parent.id) continue; // a deleted branch keeps its slug for its grace period
    try {
      return refOf((await svc.createBranch(p, parent.id, { ...input, name })).row);
    } catch (err) {
      const taken = (err instanceof ApiError && err.code === "slug_taken") || isUniqueViolation(err);
      if (!taken) throw err;
      const now = await svc.get(p, name).catch(() => null);
      if (now?.parent_id === parent.id && now.desired_state !== "removed") return refOf(now);
      throw err; // another owner's database, or not a branch of this parent
    }
  }
  throw new ApiError("slug_taken", `Every branch name from "${input.name}" to "${input.name}-20" is in use.`);
}

/** The principal's branch by id; null when it is gone or deleted. */
export async function getDatabaseBranch(
  platform: Platform,
  p: Principal,
  id: string,
): Promise<DatabaseBranchRef | null> {
  const row = await serviceOf(platform)
    .get(p, id)
    .catch(() => null);
  if (!row?.parent_id || row.desired_state === "removed") return null;
  return refOf(row);
}

/** Deletes the principal's branch as `DELETE /v1/databases/{id}` does; nothing when it is deleted already. Only branches. */
export async function deleteDatabaseBranch(platform: Platform, p: Principal, id: string): Promise<void> {
  const svc = serviceOf(platform);
  const row = await svc.get(p, id).catch(() => null);
  if (!row || row.state === "removed" || row.desired_state === "removed") return;
  if (!row.parent_id) throw new ApiError("not_a_branch", "Only a database branch is deleted this way.");
  await svc.remove(p, id).catch((err) => {
    if (!(err instanceof ApiError && err.code === "database_removed")) throw err;
  });
}
