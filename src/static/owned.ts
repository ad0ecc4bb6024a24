import { ownedSource } from "../kernel/owned-repo.js";
import type { OwnedResources } from "../orgs/contract.js";
import { OWNED_SITES, moveSites } from "./owned-repo.js";
import { STATIC_CHANNEL } from "./service.js";

/**
 * Static sites for organizations (kernel.addOwned; src/orgs/README.md, "Company assets"). A move rewrites the
 * site's owner and responsible member; its deployments follow through site_id (their account_id stays: who
 * deployed). The edge caches each site with its owner, so a move announces the slug on static_routes (migration
 * 018's trigger does not fire on owner columns).
 */
export const staticOwned = (): OwnedResources =>
  ownedSource(OWNED_SITES, (q, ids, to) => moveSites(q, ids, to, STATIC_CHANNEL));
