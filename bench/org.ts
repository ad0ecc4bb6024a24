/**
 * `npm run bench:org`: the organization benchmarks on one platform process (bench/lib/org-platform.ts):
 *  - the HR syncs (bench/org-sync.ts): departments and members, first run and idempotent re-run;
 *  - the organization audit log is bench/org-audit.ts, a script of its own (1,000,000 rows in a store of its own);
 *    `npm run bench:org` runs it after this one.
 */
import { startOrgPlatform } from "./lib/org-platform.js";
import { orgSyncBench } from "./org-sync.js";

const platform = await startOrgPlatform();
try {
  await orgSyncBench(platform);
} finally {
  await platform.stop();
}
