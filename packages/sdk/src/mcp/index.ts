/** `@hosting-platform/sdk/mcp`: the platform's MCP server, shared by `platform mcp` (stdio) and the API's /v1/mcp. */
export { createPlatformMcpServer, MANUAL_URI, type PlatformMcpOptions } from "./server.js";
export {
  agentOperations,
  buildTools,
  callTool,
  callsOf,
  GENERIC_TOOL,
  TASK_TOOLS,
  toolGroups,
  type Execute,
  type ToolDefinition,
  type ToolResult,
} from "./tools.js";
export { HIDDEN_OPERATIONS, deriveAnnotations, methodOf, type TaskSpec } from "./tasks.js";
export { untrusted, Confirmations } from "./guard.js";
export { isDdl } from "./task-specs-data.js";
