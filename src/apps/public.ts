/**
 * What other areas may use of apps without reading its tables: the host agents' feed (src/orgs serves it to the
 * agents organizations run on their own machines).
 */
export { agentFeed, type AgentFeed, type AgentFeedDeps } from "./agent-feed.js";
