import { randomBytes } from "node:crypto";
import type pg from "pg";
import { ApiError, badRequest } from "../http/errors.js";
import type { Principal } from "../auth/principal.js";
import * as repo from "./repo.js";
import { branchesOf } from "./branches-repo.js";
import {
  checkRecoverable,
  checkRetentionWindow,
  parseTargetTime,
  type CreateInput,
  type DatabasesDeps,
  type ServiceCore,
  type Size,
} from "./service-core.js";

/*
 * Database branches (issue 30; README "Branches"): a branch is a database of its own (credentials, size, billing,
 * backups) whose data starts as a copy of its parent at a moment. The route records the branch row and a `branch`
 * command in one transaction, with the parent locked; the command's job makes the copy (provider/local/branch.ts).
 */

/** What `create` needs to make a branch instead of an empty database. */
export interface BranchOrigin {
  parent: repo.DatabaseRow;
  /** the moment asked for; null: the moment the copy runs */
  target: Date | null;
  /** re-checks the parent, locked in the creation's transaction */
  check: (tx: pg.PoolClient) => Promise<void>;
}

export interface BranchInput {
  at?: string;
  name?: string;
  slug?: string;
  size?: Size;
}

type Create = (
  p: Principal,
  input: CreateInput,
  origin?: BranchOrigin,
) => Promise<{ row: repo.DatabaseRow; commandId: string }>;

/** The parent can be copied at `target` (null: now): live, placed, and within its recoverable window. */
async function checkBranchable(tx: pg.PoolClient, parent: repo.DatabaseRow, target: Date | null): Promise<void> {
  if (parent.state === "removed" || parent.desired_state === "removed")
    throw new ApiError("database_removed", "This database was deleted; restore it first.");
  if (parent.state === "creating" || !parent.host_id)
    throw new ApiError("still_creating", "The database is still being created or restored; branch it once it runs.");
  if (parent.state === "failed")
    throw new ApiError("not_restorable", "The database failed; restore it before branching it.");
  if (target) {
    checkRetentionWindow(parent, target);
    await checkRecoverable(tx, parent, target);
  } else if (parent.state === "paused" && !(await repo.firstRecoverableAt(tx, parent.id))) {
    // a stopped parent is copied from its backup and archive: without a base backup there is nothing to copy
    throw badRequest("not_running", "The database is stopped and has no base backup yet; start it to branch it.");
  }
}

export function branchOperations(deps: Pick<DatabasesDeps, "db">, core: ServiceCore, create: Create) {
  const { db } = deps;

  /** A new branch of the parent at `at` (else now): 201 with its one-time passwords, like a creation. */
  async function createBranch(p: Principal, parentRef: string, input: BranchInput) {
    const target = input.at === undefined ? null : parseTargetTime(input.at);
    const parent = await core.get(p, parentRef);
    const name = input.name ?? `${parent.slug.slice(0, 29)}-br-${randomBytes(3).toString("hex")}`;
    const spec: CreateInput = {
      name,
      slug: input.slug,
      size: input.size ?? parent.size,
      storage_gb: parent.storage_gb,
      pitr_retention_days: parent.pitr_retention_days,
    };
    return create(p, spec, {
      parent,
      target,
      check: async (tx) => checkBranchable(tx, await core.locked(tx, p, parent.id), target),
    });
  }

  /** The parent's live branches, oldest first. */
  async function listBranches(p: Principal, parentRef: string) {
    const parent = await core.get(p, parentRef);
    return branchesOf(db, parent.id);
  }

  /**
   * The branch made again as a copy of its parent as it is now; its URL and passwords stay. Its data since the
   * branch point is replaced (its own backups keep the history within its retention). 409 on a database that is no
   * branch, or whose parent was deleted.
   */
  const resetBranch = (p: Principal, ref: string) =>
    core.command(p, ref, async (row, tx) => {
      if (!row.parent_id)
        throw new ApiError("not_a_branch", "This database is not a branch; only a branch can be reset to its parent.");
      core.requireLive(row);
      if (row.state === "creating")
        throw new ApiError("still_creating", "The branch is still being made or reset; wait until it runs.");
      const parent = await repo.findDatabaseById(tx, row.parent_id);
      if (!parent) throw new ApiError("not_restorable", "The branch's parent is gone.");
      await checkBranchable(tx, parent, null).catch((err) => {
        throw err instanceof ApiError && err.code === "database_removed"
          ? new ApiError("not_restorable", "The branch's parent was deleted; there is nothing to reset it to.")
          : err;
      });
      // a reset runs the branch: it is a copy of a running database afterwards, whatever it was before
      return { kind: "reset", patch: { desired_state: "running", state: "creating", branch_target: null } };
    });

  return { createBranch, listBranches, resetBranch };
}
