import type { ErrorTable } from "../http/errors.js";

/** The error codes of the MCP area: code → [HTTP status, one-line meaning]. */
export const MCP_ERROR_CODES = {
  sql_failed: [
    422,
    "The SQL of run_sql failed in the database (its transaction was rolled back); the message says why.",
  ],
  database_unreachable: [409, "The database does not accept connections yet; wait until it runs."],
} as const satisfies ErrorTable;

declare module "../http/errors.js" {
  interface AreaErrorTables {
    mcp: typeof MCP_ERROR_CODES;
  }
}
