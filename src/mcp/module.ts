import { defineArea } from "../kernel/area.js";
import { MCP_ERROR_CODES } from "./errors.js";
import { customerSql } from "./provider/customer-sql.js";
import type { McpState } from "./provider/types.js";
import { mcpRoutes } from "./routes.js";

/** The platform as an MCP server for AI agents, over Streamable HTTP at /v1/mcp (the CLI serves the same over stdio). */
export const mcpArea = defineArea<McpState>({
  name: "mcp",
  tags: [
    {
      name: "mcp",
      description:
        "Model Context Protocol endpoint for AI agents: task tools and call_operation with the caller's token, the manual as resources.",
    },
  ],
  errors: MCP_ERROR_CODES,
  setup: (platform) => ({ sql: customerSql(platform.db, platform.kernel) }),
  routes: mcpRoutes,
});
