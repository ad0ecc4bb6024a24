/**
 * (Under provider/: SQL against a customer's own server, which the control-plane SQL rule exempts.)
 * run_sql for the MCP tools: SQL on a caller's database, bounded in rows, time and answer size.
 *
 * Decision (issue 28): it connects as the database's owner role, with the password the platform keeps for attached
 * apps (the databases area's "attachables" contribution, the same DATABASE_URL a pod gets), rather than a role
 * made for the purpose: a new role would have to be created and granted inside every customer database and kept
 * in step with the owner's grants, and the owner is exactly what the caller's key may act as. Without `write`
 * the SQL runs in a `BEGIN READ ONLY` transaction, as one statement sent with the extended protocol (so no
 * `COMMIT; ...` can leave the transaction), and transaction or session control is refused outright. With `write`
 * (which needs databases:write) the statements run in one ordinary transaction.
 */
import pg from "pg";
import type { Owner } from "../../kernel/owner.js";
import type { Queryable } from "../../store/db.js";
import type { Attachable } from "../../apps/contract.js";
import { ApiError } from "../../http/errors.js";
import type { Kernel } from "../../kernel/kernel.js";
import type { SqlAnswer, SqlRunner } from "./types.js";

export const MAX_ROWS = 500;
export const MAX_ANSWER_BYTES = 64 * 1024;
export const STATEMENT_TIMEOUT_MS = 10_000;

/** What could end the read-only transaction or change the session so that a later statement writes. */
const CONTROL =
  /^\s*(begin|start|commit|end|rollback|abort|savepoint|release|prepare|set|reset|discard|do|call|copy|listen|notify|lock)\b/i;

function bounded(result: pg.QueryResult | undefined, started: number): SqlAnswer {
  const all = result?.rows ?? [];
  let rows = all.slice(0, MAX_ROWS);
  let truncated = all.length > rows.length;
  while (rows.length && Buffer.byteLength(JSON.stringify(rows)) > MAX_ANSWER_BYTES) {
    rows = rows.slice(0, Math.floor(rows.length / 2));
    truncated = true;
  }
  return {
    command: result?.command ?? null,
    row_count: result?.rowCount ?? null,
    columns: (result?.fields ?? []).map((f) => f.name),
    rows,
    truncated,
    elapsed_ms: Date.now() - started,
  };
}

/** The runner over the databases area's attachables (none: a platform without databases answers not_found). */
export function customerSql(q: Queryable, kernel: Pick<Kernel, "all">): SqlRunner {
  return {
    run: (owner, ref, sql, write) => {
      const source = kernel.all("attachables").find((a) => a.resource === "databases");
      if (!source) throw new ApiError("not_found", "This platform has no databases area.");
      return runSql(q, source, owner, ref, sql, write);
    },
  };
}

async function runSql(
  q: Queryable,
  databases: Attachable,
  owner: Owner,
  ref: string,
  sql: string,
  write: boolean,
): Promise<SqlAnswer> {
  if (!write && CONTROL.test(sql.replace(/^(\s|--[^\n]*\n|\/\*[\s\S]*?\*\/)*/, "")))
    throw new ApiError(
      "invalid_request",
      "Transaction and session control (BEGIN, COMMIT, SET, COPY, DO, ...) is not allowed in read-only SQL; send write: true to change data.",
    );
  const target = await databases.resolve(q, owner, ref);
  if (!target) throw new ApiError("not_found", `No running database "${ref}" of the caller.`);
  const env = target.env;
  const client = new pg.Client({
    host: env.PGHOST,
    port: Number(env.PGPORT),
    database: env.PGDATABASE,
    user: env.PGUSER,
    password: env.PGPASSWORD,
    // the platform's own server, reached on the host address; its certificate is the platform's (pool.ts does the same)
    ssl: { rejectUnauthorized: false },
    connectionTimeoutMillis: 5000,
    statement_timeout: STATEMENT_TIMEOUT_MS,
    application_name: "platform-mcp-run-sql",
  });
  try {
    await client.connect();
  } catch (err) {
    throw new ApiError("conflict", `The database does not accept connections yet (${(err as Error).message}).`);
  }
  const started = Date.now();
  try {
    await client.query(write ? "BEGIN" : "BEGIN READ ONLY");
    await client.query(`SET LOCAL statement_timeout = ${STATEMENT_TIMEOUT_MS}`);
    let result: pg.QueryResult | pg.QueryResult[];
    if (write) result = await client.query(sql);
    else result = await client.query({ text: sql, queryMode: "extended" } as pg.QueryConfig);
    await client.query(write ? "COMMIT" : "ROLLBACK").catch(() => {});
    return bounded(Array.isArray(result) ? result.at(-1) : result, started);
  } catch (err) {
    await client.query("ROLLBACK").catch(() => {});
    const e = err as Error & { code?: string };
    const reason = e.code === "57014" ? `it ran longer than ${STATEMENT_TIMEOUT_MS / 1000} s` : e.message;
    throw new ApiError(
      "invalid_request",
      `The SQL failed (nothing was changed): ${reason}${e.code ? ` [SQLSTATE ${e.code}]` : ""}`,
    );
  } finally {
    await client.end().catch(() => {});
  }
}
