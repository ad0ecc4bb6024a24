import { ownedSource } from "../kernel/owned-repo.js";
import type { OwnedResources } from "../orgs/contract.js";
import { OWNED_BUCKETS, moveBuckets } from "./owned-repo.js";

/**
 * Buckets for organizations (kernel.addOwned; src/orgs/README.md, "Company assets"). The gateway lets a key use a
 * bucket only when both have one owner (gateway/server.ts `covers`), reading keys from the store on every request.
 * So a move takes along the live S3 keys limited to moved buckets only (the apps using them keep working); keys of
 * every bucket of the old owner, or of other buckets too, stay with it and no longer reach the moved bucket. Names
 * are unique platform-wide: a move never collides.
 */
export const bucketsOwned = (): OwnedResources => ownedSource(OWNED_BUCKETS, moveBuckets);
