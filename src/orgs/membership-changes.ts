/**
 * What happens to a member's things when they stop being a member (leave, removal, the organization's deletion):
 * company assets stay the organization's with the owner as the responsible member, or (deletion) go back to their
 * creators; organization keys the member issued are revoked; site grants and member budgets go. One transaction,
 * the caller's.
 */
import type { Queryable } from "../store/db.js";
import type { Kernel } from "../kernel/kernel.js";
import type { TokenResolver } from "../auth/token-resolver.js";
import { accountOwner, type Owner } from "../kernel/owner.js";
import * as repo from "./repo.js";

export interface ChangeDeps {
  kernel: Kernel;
  tokens: TokenResolver;
}

const orgOwner = (orgId: string): Owner => ({ kind: "org", id: orgId });

/** Company assets the member is responsible for become the organization owner's responsibility. */
export async function handOverAssets(q: Queryable, kernel: Kernel, orgId: string, from: string, to: string) {
  let moved = 0;
  for (const source of kernel.all("owned")) {
    const ids = (await source.list(q, orgOwner(orgId))).filter((r) => r.accountId === from).map((r) => r.id);
    if (ids.length) await source.reassign(q, ids, { owner: orgOwner(orgId), accountId: to });
    moved += ids.length;
  }
  return moved;
}

/** Every company asset goes back to its creator's personal ownership. */
export async function returnAssetsToCreators(q: Queryable, kernel: Kernel, orgId: string) {
  let moved = 0;
  for (const source of kernel.all("owned")) {
    const byCreator = new Map<string, string[]>();
    for (const r of await source.list(q, orgOwner(orgId)))
      byCreator.set(r.accountId, [...(byCreator.get(r.accountId) ?? []), r.id]);
    for (const [creator, ids] of byCreator) {
      await source.reassign(q, ids, { owner: accountOwner(creator), accountId: creator });
      moved += ids.length;
    }
  }
  return moved;
}

/** Revokes the organization keys (tokens owned by the organization) one member issued, or all of them. */
export async function revokeOrgKeys(q: Queryable, tokens: TokenResolver, orgId: string, accountId?: string) {
  for (const tokenId of await repo.revokeOrgTokens(q, orgId, accountId))
    await tokens.announceRevocation(q, { tokenId });
}

/** Takes a member out of the organization; the caller has checked they are not the owner. */
export async function removeFromOrg(q: Queryable, deps: ChangeDeps, org: repo.OrgRow, accountId: string) {
  const moved = await handOverAssets(q, deps.kernel, org.id, accountId, org.owner_account_id);
  await revokeOrgKeys(q, deps.tokens, org.id, accountId);
  await repo.dropMemberGrantsAndBudgets(q, org.id, accountId);
  await repo.removeMember(q, org.id, accountId);
  // cached principals of the account (its session and keys) are reloaded without the organization
  await deps.tokens.announceAccountChange(q, accountId);
  return { assets_handed_over: moved };
}
