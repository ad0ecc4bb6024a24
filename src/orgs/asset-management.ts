import type { Queryable } from "../store/db.js";
import { ApiError } from "../http/errors.js";
import { roleAtLeast } from "./contract.js";
import type { ManagedAsset } from "../kernel/contracts.js";
import * as repo from "./repo.js";

/**
 * Who changes company assets (issue 34; README.md, "Who changes company assets"), as GitHub and Vercel teams work:
 * every member reads them, a member changes and deletes those they are responsible for, admins and the owner all of
 * them; `members_manage_all_assets` (an admin's setting) lets every member manage every one. The kernel calls this
 * for every change to a company asset (kernel.assertMayManage); the responsible member has passed already.
 */
export async function assertMayManageAsset(
  q: Queryable,
  orgId: string,
  accountId: string,
  asset: ManagedAsset,
): Promise<void> {
  const found = await repo.assetManagement(q, orgId, accountId, asset.accountId);
  if (!found?.role) throw new ApiError("forbidden_role", "The caller is no longer a member of the organization.");
  if (roleAtLeast(found.role, "admin") || found.membersManageAll) return;
  const whose =
    asset.accountId === null
      ? `${asset.label} reaches other members' assets. An organization admin or the owner can do it`
      : `${asset.label} is the responsibility of ${found.responsibleEmail ?? "another member"}. They, an organization admin or the owner can change it`;
  throw new ApiError(
    "forbidden_role",
    `Members change and delete only the company assets they are responsible for; ${whose} (or an admin lets every member manage all assets: PATCH /v1/org {"members_manage_all_assets": true}).`,
  );
}
