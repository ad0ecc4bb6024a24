import { defineArea } from "../kernel/area.js";
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
        "Model Context Protocol endpoint for AI agents: the API's operations as tools, with the caller's token.",
    },
  ],
  setup: (platform) => ({ sql: customerSql(platform.db, platform.kernel) }),
  routes: mcpRoutes,
});
