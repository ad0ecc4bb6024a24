import { ApiError, notFound } from "../../http/errors.js";
import type { Principal } from "../../auth/principal.js";
import type { Db } from "../../store/db.js";
import type { GroupsService, GroupWithMembers } from "../groups/service.js";
import { groupReleaseByNumber, listGroupReleases, type GroupReleaseRow } from "./group-repo.js";

/**
 * A group's releases (issue 29), and a rollback to one of them: the release's spec (env and secrets included)
 * becomes a new release "rollback to N", admitted and rolled over the members a batch at a time like any change.
 * Without `release`, the group goes back to the newest release before its current one that served.
 */
export function groupReleasesService(deps: { db: Db; groups: GroupsService }) {
  const { db, groups } = deps;

  async function list(p: Principal, ref: string): Promise<GroupReleaseRow[]> {
    const { group } = await groups.get(p, ref);
    return listGroupReleases(db, group.id);
  }

  async function rollback(p: Principal, ref: string, number: number | undefined): Promise<GroupWithMembers> {
    const { group } = await groups.get(p, ref);
    if (group.desired_state === "removed") throw notFound("pod group");
    const releases = await listGroupReleases(db, group.id);
    const target =
      number === undefined
        ? releases.find((r) => r.number < group.release && (r.outcome === "superseded" || r.outcome === "serving"))
        : await groupReleaseByNumber(db, group.id, number);
    if (!target)
      throw number === undefined
        ? new ApiError("conflict", "The group has no earlier release that served to go back to.")
        : new ApiError("not_found", `The group has no release ${number}.`);
    if (target.number === group.release)
      throw new ApiError(
        "conflict",
        `The group is at release ${target.number} already; there is nothing to roll back.`,
      );
    return groups.update(p, group.id, {}, { spec: target.spec, description: `rollback to release ${target.number}` });
  }

  return { list, rollback };
}
