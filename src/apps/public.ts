/**
 * What other areas may use of apps without reading its tables: the feed that tells an external host's agent what to
 * run and takes its reports (organization hosts, src/orgs/hosts).
 */
export { agentFeed, type AgentFeed } from "./agent-feed.js";
/** the pods running on a host, for the per-minute metrics sampler (src/metrics) */
export { podsToSample, groupPodIds, type PodToSample } from "./metrics-repo.js";
/** the pods on a host and their secret masking, for log drains (src/drains) */
export { podsForDrains, podLogMasker, type PodLogSource } from "./drains-repo.js";
/** what is kept beside a secret env value instead of the value (cron jobs keep their secrets the same way) */
export type { SecretMeta } from "./secrets/env.js";
