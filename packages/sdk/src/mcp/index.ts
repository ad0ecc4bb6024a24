/** `@hosting-platform/sdk/mcp`: the platform's MCP server, shared by `platform mcp` (stdio) and the API's /v1/mcp. */
export { createPlatformMcpServer, MANUAL_URI, type PlatformMcpOptions } from "./server.js";
export {
  agentOperations,
  buildTools,
  callTool,
  GENERIC_TOOL,
  type Execute,
  type ToolDefinition,
  type ToolResult,
} from "./tools.js";
