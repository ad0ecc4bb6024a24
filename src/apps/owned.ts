import type { Queryable } from "../store/db.js";
import type { OwnedResource, OwnedResources } from "../orgs/contract.js";
import type { Owner } from "../kernel/owner.js";
import { membersOfMany, type GroupRow } from "./groups/repo.js";
import { groupState } from "./groups/view.js";
import * as repo from "./owned-repo.js";

/**
 * Pods, pod groups and volumes for organizations (contribution "owned"; src/orgs/README.md, "Company assets"): company
 * asset lists and ownership moves. A group is one asset (its member pods are not listed apart and move with it); a
 * pod's volumes move with the pod. Registered in this order (groups, pods, volumes), so moves that walk every
 * source (an organization deleted) carry mounted volumes with their pods before volumes are looked at alone.
 */
export function appsOwned(): OwnedResources[] {
  return [groupSource(), podSource(), volumeSource()];
}

const resource = (kind: string, r: repo.OwnedRow): OwnedResource => ({
  kind,
  id: r.id,
  name: r.name,
  slug: r.slug,
  owner: { kind: r.owner_kind, id: r.owner_id },
  accountId: r.account_id,
  state: r.state,
  createdAt: r.created_at,
});

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

function podSource(): OwnedResources {
  return {
    kind: "pod",
    list: async (q, owner) => (await repo.ownedPods(q, owner)).map((r) => resource("pod", r)),
    find: async (q, ref) => {
      const r = await repo.podByRef(q, ref);
      return r && resource("pod", r);
    },
    reassign: (q, ids, to) => repo.movePods(q, ids, to),
    ties,
  };
}

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

function volumeSource(): OwnedResources {
  return {
    kind: "volume",
    list: async (q, owner) => (await repo.ownedVolumes(q, owner)).map((r) => resource("volume", r)),
    find: async (q, ref) => {
      const r = await repo.volumeById(q, ref);
      return r && resource("volume", r);
    },
    reassign: (q, ids, to) => repo.moveVolumes(q, ids, to),
  };
}
