import type { Owner } from "../../kernel/owner.js";

/** The last statement's rows (bounded) and what it did. */
export interface SqlAnswer {
  command: string | null;
  row_count: number | null;
  columns: string[];
  rows: Record<string, unknown>[];
  truncated: boolean;
  elapsed_ms: number;
}

/** run_sql against a customer's database, as its owner (customer-sql.ts). */
export interface SqlRunner {
  run(owner: Owner, ref: string, sql: string, write: boolean): Promise<SqlAnswer>;
}

export interface McpState {
  sql: SqlRunner;
}
