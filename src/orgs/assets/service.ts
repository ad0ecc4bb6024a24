/**
 * Company assets (README.md here, "Company assets"): the resources an organization owns, read and moved
 * through every area's kernel.all("owned") source. Designation moves one of the member's personal resources, with what is
 * tied to it (a pod's databases and volumes, a database's apps), to the organization; removal moves it back to its
 * creator. Each move is one transaction with its audit row: a refusal anywhere (409) moves nothing.
 */
import type { Db, Queryable } from "../../store/db.js";
import type { Principal } from "../../auth/principal.js";
import type { Kernel } from "../../kernel/kernel.js";
import type { OrgMembership, OwnedResource, OwnedResources } from "../public.js";
import { accountOwner, sameOwner, type Owner } from "../../kernel/owner.js";
import { auditedTransaction } from "../../audit/record.js";
import { ApiError } from "../../http/errors.js";
import * as repo from "./repo.js";

export interface AssetsDeps {
  db: Db;
  kernel: Kernel;
}

/** kinds the bodies and paths take: the sources' own, and the names the spec and console use for some */
export const ASSET_KINDS = ["pod", "pod-group", "site", "database", "volume", "bucket", "domain"] as const;
export const KIND_ALIASES: Record<string, string> = { disk: "volume", static: "site", group: "pod-group" };

export interface Asset extends OwnedResource {
  creator: repo.Creator;
}

export interface AssetMove {
  asset: Asset;
  /** resources tied to it that moved with it */
  movedWith: Asset[];
  /** false: it already was where it was asked to go (nothing changed) */
  moved: boolean;
}

const orgOwner = (orgId: string): Owner => ({ kind: "org", id: orgId });
const label = (r: OwnedResource) => `${r.kind} ${r.slug ?? r.name}`;

export function assetsService(d: AssetsDeps) {
  const { db, kernel } = d;

  function source(kind: string): OwnedResources {
    const canonical = KIND_ALIASES[kind] ?? kind;
    const s = kernel.all("owned").find((o) => o.kind === canonical);
    if (!s) throw new ApiError("invalid_request", `kind ${kind} is not a company asset kind on this platform.`);
    return s;
  }

  async function withCreators(q: Queryable, items: OwnedResource[]): Promise<Asset[]> {
    const people = await repo.creators(
      q,
      items.map((r) => r.accountId),
    );
    return items.map((r) => ({
      ...r,
      creator: people.get(r.accountId) ?? { id: r.accountId, email: null, deleted: true },
    }));
  }

  /** Every company asset of the organization, oldest first, optionally of one kind or creator. */
  async function companyAssets(q: Queryable, orgId: string, f: { kind?: string; creator?: string }) {
    const sources = f.kind ? [source(f.kind)] : kernel.all("owned");
    const all: OwnedResource[] = [];
    for (const s of sources) all.push(...(await s.list(q, orgOwner(orgId))));
    const picked = all
      .filter((r) => !f.creator || r.accountId === f.creator)
      .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || a.id.localeCompare(b.id));
    return withCreators(q, picked);
  }

  /** The resource and everything tied to it, transitively (ties of tied ones too), as their sources find them. */
  async function bundle(q: Queryable, root: OwnedResource): Promise<OwnedResource[]> {
    const seen = new Map([[`${root.kind}:${root.id}`, root]]);
    const queue = [root];
    while (queue.length) {
      const cur = queue.shift()!;
      for (const s of kernel.all("owned")) {
        for (const t of (await s.ties?.(q, { kind: cur.kind, id: cur.id })) ?? []) {
          const key = `${t.kind}:${t.id}`;
          if (seen.has(key)) continue;
          const found = await kernel
            .all("owned")
            .find((o) => o.kind === t.kind)
            ?.find(q, t.id);
          if (!found) continue; // gone, or not an asset of its own (a group's member pod)
          seen.set(key, found);
          queue.push(found);
        }
      }
      if (seen.size > 100)
        throw new ApiError("conflict", `${label(root)} is tied to more than 100 resources; move fewer at once.`);
    }
    return [...seen.values()];
  }

  /** Moves the given resources, grouped per kind, to one owner and creator; answers them as found afterwards. */
  async function moveAll(q: Queryable, items: OwnedResource[], to: { owner: Owner; accountId: string }) {
    for (const s of kernel.all("owned")) {
      const ids = items.filter((r) => r.kind === s.kind).map((r) => r.id);
      if (ids.length) await s.reassign(q, ids, to);
    }
    const after: OwnedResource[] = [];
    for (const r of items) {
      const now = await source(r.kind).find(q, r.id);
      if (!now || !sameOwner(now.owner, to.owner))
        throw new ApiError("conflict", `${label(r)} changed while it was being moved; try again.`);
      after.push(now);
    }
    return after;
  }

  async function answer(q: Queryable, moved: OwnedResource[], root: OwnedResource, didMove: boolean) {
    const [asset, ...movedWith] = await withCreators(q, [
      moved.find((r) => r.kind === root.kind && r.id === root.id) ?? root,
      ...moved.filter((r) => !(r.kind === root.kind && r.id === root.id)),
    ]);
    return { asset: asset!, movedWith, moved: didMove } satisfies AssetMove;
  }

  return {
    /** The caller's company assets: the organization's resources the caller is responsible for. */
    own: (p: Principal, m: OrgMembership, kind?: string) => companyAssets(db, m.orgId, { kind, creator: p.accountId }),

    /** Every company asset (the enterprise view). */
    all: (m: OrgMembership, f: { kind?: string; creator?: string }) => companyAssets(db, m.orgId, f),

    /**
     * A member designates one of their personal resources (and what is tied to it) as company assets: owner the
     * organization, the member stays responsible. Already the organization's: answered as it is (moved false).
     */
    async designate(p: Principal, m: OrgMembership, ref: { kind: string; id: string }): Promise<AssetMove> {
      const src = source(ref.kind);
      const me = accountOwner(p.accountId);
      const org = orgOwner(m.orgId);
      return auditedTransaction(db, p, async (tx) => {
        await repo.lockOrgAssets(tx, m.orgId);
        const root = await src.find(tx, ref.id);
        if (root && sameOwner(root.owner, org)) return answer(tx, [root], root, false);
        if (!root || !sameOwner(root.owner, me))
          throw new ApiError("not_found", `No ${src.kind} ${ref.id} of the caller's own to designate.`);
        const items = await bundle(tx, root);
        const foreign = items.find((r) => !sameOwner(r.owner, me) && !sameOwner(r.owner, org));
        if (foreign)
          throw new ApiError(
            "conflict",
            `${label(root)} is tied to ${label(foreign)}, which is not the caller's; detach it first. Nothing was moved.`,
          );
        const moving = items.filter((r) => sameOwner(r.owner, me));
        if (p.audit) p.audit.target = root.id;
        return answer(tx, await moveAll(tx, moving, { owner: org, accountId: p.accountId }), root, true);
      });
    },

    /**
     * An admin removes a designation: the resource goes back to its creator's personal ownership, with what is tied
     * to it when the same member is responsible for that too (a tie to another member's asset is a 409: detach it).
     */
    async release(p: Principal, m: OrgMembership, ref: { kind: string; id: string }): Promise<AssetMove> {
      const src = source(ref.kind);
      const org = orgOwner(m.orgId);
      return auditedTransaction(db, p, async (tx) => {
        await repo.lockOrgAssets(tx, m.orgId);
        const root = await src.find(tx, ref.id);
        if (!root || !sameOwner(root.owner, org))
          throw new ApiError("not_found", `No company asset ${src.kind} ${ref.id} in this organization.`);
        const creator = (await repo.creators(tx, [root.accountId])).get(root.accountId);
        if (!creator || creator.deleted)
          throw new ApiError(
            "conflict",
            `The account responsible for ${label(root)} no longer exists; it stays a company asset.`,
          );
        const home = accountOwner(root.accountId);
        const items = await bundle(tx, root);
        const other = items.find(
          (r) => !sameOwner(r.owner, home) && !(sameOwner(r.owner, org) && r.accountId === root.accountId),
        );
        if (other)
          throw new ApiError(
            "conflict",
            `${label(root)} is tied to ${label(other)}, which stays with the organization (another member is responsible for it); detach it first. Nothing was moved.`,
          );
        const moving = items.filter((r) => sameOwner(r.owner, org));
        return answer(tx, await moveAll(tx, moving, { owner: home, accountId: root.accountId }), root, true);
      });
    },
  };
}

export type AssetsService = ReturnType<typeof assetsService>;
