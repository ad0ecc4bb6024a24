import type pg from "pg";
import type { Queryable } from "./db.js";

/**
 * One column of the first row a statement answers, or null when no row came back: the repos' single-value reads
 * (a namespace, a profile's info, a count or a sum), which otherwise each repeat the query-then-pick steps.
 */
export async function oneValue<T, K extends string = string>(
  q: Queryable,
  column: K,
  sql: string,
  params: unknown[] = [],
): Promise<T | null> {
  const { rows } = await q.query<pg.QueryResultRow & Record<K, T>>(sql, params);
  return rows[0]?.[column] ?? null;
}

/** The number a `SELECT count(*)::int AS n …` statement answers (it always answers one row): the limit checks. */
export async function countOf(q: Queryable, sql: string, params: unknown[] = []): Promise<number> {
  return (await oneValue<number>(q, "n", sql, params)) ?? 0;
}

/** One column of every row a statement answers, in order: the repos' id and name lists. */
export async function allValues<T, K extends string = string>(
  q: Queryable,
  column: K,
  sql: string,
  params: unknown[] = [],
): Promise<T[]> {
  const { rows } = await q.query<pg.QueryResultRow & Record<K, T>>(sql, params);
  return rows.map((r) => r[column]);
}
