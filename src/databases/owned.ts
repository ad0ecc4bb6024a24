import { ownedSource } from "../kernel/owned-repo.js";
import type { OwnedResources } from "../orgs/contract.js";
import { ownerKey } from "../kernel/owner.js";
import type { OwnerChangeFeed } from "../kernel/change-feed.js";
import { OWNED_DATABASES, moveDatabases } from "./owned-repo.js";

/**
 * Managed databases for organizations (kernel.addOwned; src/orgs/README.md, "Company assets"). A move rewrites the
 * owner and responsible member of the instances and of their backups (the new owner sees and restores them). The
 * owner change feed hears it from migration 010's trigger at commit; this process's list cache drops both owners
 * at once. Slugs are unique platform-wide, so a move never collides. Servers are not touched; a non-empty
 * allowlist admits the new owner's app networks from the reconciler's next pass (driftedAllowlists).
 */
export function databasesOwned(changes: Pick<OwnerChangeFeed, "changed">): OwnedResources {
  return ownedSource(OWNED_DATABASES, async (q, ids, to) => {
    const before = await moveDatabases(q, ids, to);
    // the trigger's NOTIFY comes at commit; until then this process's cached lists are dropped now
    for (const key of new Set([ownerKey(to.owner), ...before.map(ownerKey)])) changes.changed(key);
  });
}
