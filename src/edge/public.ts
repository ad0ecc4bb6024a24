/**
 * What other areas may use of the edge without reading its tables: the daily traffic statistics of an owner's apps
 * and their answer schemas (the organization's statistics in src/orgs/stats).
 */
export { AppStats, Days } from "./stats/routes.js";
export { ownerAppsStats, type StatsKind, type StatsView, type Window } from "./stats/service.js";
export { lastRequests } from "./stats/repo.js";
/** per-minute traffic of an app (issue 31's metrics, src/metrics) and its retention */
export { targetMinutes, ownerMinutes, pruneMinuteStats, type MinuteRow } from "./stats/repo.js";
export { percentile } from "./stats/histogram.js";
/** the hourly roll-up of those minutes (kept 90 days), run by src/metrics' jobs */
export { rollupEdgeHours, targetHours, recentTraffic, pruneHourStats } from "./stats/series-repo.js";
