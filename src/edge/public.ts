/**
 * What other areas may use of the edge without reading its tables: the apps' request statistics (src/orgs sums
 * them over an organization's apps) and their answer schemas.
 */
export { ownerAppsStats, type StatsKind, type StatsView, type Window } from "./stats/service.js";
export { AppStats, Days } from "./stats/routes.js";
