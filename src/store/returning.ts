import type pg from "pg";
import type { Queryable } from "./db.js";

/**
 * The row a statement always answers: an INSERT or UPDATE … RETURNING of a row the caller knows is there, a
 * singleton or aggregate read. The repos' writes that give their row back, without each repeating the query steps.
 */
export async function returnedRow<T extends pg.QueryResultRow>(
  q: Queryable,
  sql: string,
  params: unknown[] = [],
): Promise<T> {
  const { rows } = await q.query<T>(sql, params);
  return rows[0];
}
