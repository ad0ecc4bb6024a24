/**
 * `npm run bench:org`: the organization benchmarks on one platform process (bench/lib/org-platform.ts):
 *  - the HR syncs (bench/org-sync.ts): departments and members, first run and idempotent re-run;
 *  - the organization audit log (bench/org-audit.ts), added at the marked place below.
 */
import { startOrgPlatform } from "./lib/org-platform.js";
import { orgSyncBench } from "./org-sync.js";

const platform = await startOrgPlatform();
try {
  await orgSyncBench(platform);
  // ---- audit part (bench/org-audit.ts): import it above and run it here, on the same platform ----
} finally {
  await platform.stop();
}
