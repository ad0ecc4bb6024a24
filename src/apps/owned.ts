import type { Queryable } from "../store/db.js";
import type { OwnedResource, OwnedResources } from "../orgs/contract.js";
import { ownedSource } from "../kernel/owned-repo.js";
import type { Owner } from "../kernel/owner.js";
import { membersOfMany, type GroupRow } from "./groups/repo.js";
import { groupState } from "./groups/view.js";
import * as repo from "./owned-repo.js";

/**
 * Pods, pod groups and volumes for organizations (kernel.addOwned; src/orgs/README.md, "Company assets"): company
 * asset lists and ownership moves. A group is one asset (its member pods are not listed apart and move with it); a
 * pod's volumes move with the pod. Registered in this order (groups, pods, volumes), so moves that walk every
 * source (an organization deleted) carry mounted volumes with their pods before volumes are looked at alone.
 */
export function appsOwned(): OwnedResources[] {
  return [groupSource(), podSource(), volumeSource()];
}

/** Ties through attachments and mounts are the apps' tables: this source answers for databases and volumes too. */
async function ties(q: Queryable, ref: { kind: string; id: string }) {
  switch (ref.kind) {
    case "pod":
      return repo.podTies(q, ref.id);
    case "pod-group":
      return repo.groupTies(q, ref.id);
    case "database":
      return repo.databaseTies(q, ref.id);
    case "volume":
      return repo.volumeTies(q, ref.id);
    default:
      return [];
  }
}

const podSource = (): OwnedResources => ownedSource(repo.OWNED_PODS, repo.movePods, ties);

async function groupResources(q: Queryable, groups: GroupRow[]): Promise<OwnedResource[]> {
  const members = await membersOfMany(
    q,
    groups.map((g) => g.id),
  );
  return groups.map((g) => ({
    kind: "pod-group",
    id: g.id,
    name: g.name,
    slug: g.slug,
    owner: { kind: g.owner_kind, id: g.owner_id } satisfies Owner,
    accountId: g.account_id,
    state: groupState(g.desired_state, members.get(g.id) ?? []),
    createdAt: g.created_at,
  }));
}

function groupSource(): OwnedResources {
  return {
    kind: "pod-group",
    list: async (q, owner) => groupResources(q, await repo.ownedGroups(q, owner)),
    find: async (q, ref) => {
      const g = await repo.groupByRef(q, ref);
      return g ? (await groupResources(q, [g]))[0]! : null;
    },
    reassign: (q, ids, to) => repo.moveGroups(q, ids, to),
  };
}

const volumeSource = (): OwnedResources => ownedSource(repo.OWNED_VOLUMES, repo.moveVolumes);
