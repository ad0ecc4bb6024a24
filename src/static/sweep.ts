import type { FastifyBaseLogger } from "fastify";
import type { JobSpec } from "../kernel/area.js";
import type { Db } from "../store/db.js";
import type { StaticConfig } from "./config.js";
import * as repo from "./repo.js";

export const SWEEP_JOB = "static.sweep";
/** a content no deployment names is kept this long after an upload last used it */
const BLOB_GRACE_MINUTES = 60;

/**
 * The static sweep (every 10 minutes, on one worker): deletes the deployments of deleted sites, finalized ones
 * beyond the newest STATIC_KEEP_DEPLOYMENTS of a site (never the live one), abandoned ones, then the contents
 * no deployment names any more.
 */
export async function sweep(db: Db, config: StaticConfig, log: FastifyBaseLogger) {
  await repo.releaseRemovedSites(db);
  let deployments = 0;
  for (;;) {
    const ids = await repo.prunableDeployments(db, {
      keep: config.keepDeployments,
      abandonedHours: config.abandonedHours,
      limit: 100,
    });
    if (!ids.length) break;
    let progressed = false;
    for (const id of ids) {
      // one at a time: a deployment made live again meanwhile (rollback) is refused by the site's reference
      const ok = await repo.deleteDeployment(db, id).then(
        () => true,
        (err: Error) => (log.warn({ err: err.message, id }, "static deployment not pruned"), false),
      );
      if (ok) deployments++;
      progressed ||= ok;
    }
    if (!progressed) break;
  }
  let blobs = 0;
  for (;;) {
    const n = await repo.deleteUnusedBlobs(db, BLOB_GRACE_MINUTES, 500).catch((err: Error) => {
      log.warn({ err: err.message }, "static contents not swept");
      return 0;
    });
    blobs += n;
    if (n < 500) break;
  }
  if (deployments || blobs) log.info({ deployments, blobs }, "static sites swept");
  return { deployments, blobs };
}

export function staticJobs(db: Db, config: StaticConfig, log: FastifyBaseLogger): JobSpec[] {
  return [
    {
      name: SWEEP_JOB,
      cron: "*/10 * * * *",
      policy: "stately",
      retryLimit: 0,
      expireInSeconds: 900,
      handler: async () => {
        await sweep(db, config, log);
      },
    },
  ];
}
