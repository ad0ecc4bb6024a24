import type { JobSpec } from "./contracts.js";

/**
 * A pass run every minute (a `cron` job of an area), one at a time: at most one queued (stately), never retried (the
 * next minute is its retry), failed once it outlasts `expireInSeconds`. `perHost`: on every host, over what it runs.
 */
export function everyMinute(
  name: string,
  run: () => Promise<unknown>,
  opts: { expireInSeconds: number; perHost?: boolean },
): JobSpec {
  return {
    name,
    ...(opts.perHost ? { perHost: true } : {}),
    cron: "* * * * *",
    concurrency: 1,
    policy: "stately",
    retryLimit: 0,
    expireInSeconds: opts.expireInSeconds,
    handler: async () => {
      await run();
    },
  };
}
