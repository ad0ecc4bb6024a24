import pg from "pg";

// BIGINT (int8) columns carry money and counters: parse them as JS numbers, which are exact up to 2^53.
pg.types.setTypeParser(20, (v) => {
  const n = Number(v);
  if (!Number.isSafeInteger(n)) throw new Error(`int8 value ${v} exceeds the safe integer range`);
  return n;
});

export type Db = pg.Pool;
export type Queryable = pg.Pool | pg.PoolClient;

export function createPool(connectionString: string, max = 10): Db {
  const pool = new pg.Pool({ connectionString, max, idleTimeoutMillis: 30_000 });
  // an idle client losing its server must not crash the process; the pool replaces it
  pool.on("error", () => {});
  // nor a checked-out one between queries (a session lock held across a long command, a connection ended by the
  // server): its next query fails instead, and the pool drops it when it is released
  pool.on("connect", (client) => client.on("error", () => {}));
  return pool;
}

/** Runs fn in one transaction; services own this boundary and pass the client down. */
export async function inTransaction<T>(db: Db, fn: (tx: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await db.connect();
  try {
    await client.query("BEGIN");
    const result = await fn(client);
    await client.query("COMMIT");
    return result;
  } catch (err) {
    await client.query("ROLLBACK").catch(() => {});
    throw err;
  } finally {
    client.release();
  }
}

export function isUniqueViolation(err: unknown, constraint?: string): boolean {
  const e = err as { code?: string; constraint?: string };
  return e?.code === "23505" && (!constraint || e.constraint === constraint);
}

/** Whether a path ref is a UUID (an id) rather than a slug or name. */
export const isUuid = (ref: string): boolean =>
  /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(ref);

/** Whether the store answers at all (readiness). */
export async function ping(q: Queryable): Promise<void> {
  await q.query("SELECT 1");
}

/** Starts hearing NOTIFYs on `channel` on a connection of its own. */
export async function listen(client: pg.Client, channel: string): Promise<void> {
  await client.query(`LISTEN ${client.escapeIdentifier(channel)}`);
}

/** The first row a statement answers, or null: the repos' one-row reads and `RETURNING *` writes. */
export async function oneRow<T extends pg.QueryResultRow>(
  q: Queryable,
  sql: string,
  params: unknown[] = [],
): Promise<T | null> {
  const { rows } = await q.query<T>(sql, params);
  return rows[0] ?? null;
}

/**
 * The row a statement always answers: an INSERT or UPDATE … RETURNING of a row the caller knows is there, a
 * singleton or aggregate read (no null to check, unlike `oneRow`).
 */
export async function returnedRow<T extends pg.QueryResultRow>(
  q: Queryable,
  sql: string,
  params: unknown[] = [],
): Promise<T> {
  const { rows } = await q.query<T>(sql, params);
  return rows[0];
}

/** Every row a statement answers: the repos' list reads. */
export async function allRows<T extends pg.QueryResultRow>(
  q: Queryable,
  sql: string,
  params: unknown[] = [],
): Promise<T[]> {
  const { rows } = await q.query<T>(sql, params);
  return rows;
}

/** Whether a statement found or changed any row (an UPDATE or DELETE that matched, an EXISTS-style SELECT). */
export async function anyRows(q: Queryable, sql: string, params: unknown[] = []): Promise<boolean> {
  const { rowCount } = await q.query(sql, params);
  return (rowCount ?? 0) > 0;
}

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

/** Runs a statement that answers `RETURNING id` and gives the ids (the pause/resume updates of the lifecycles). */
export const returnedIds = (q: Queryable, sql: string, params: unknown[]): Promise<string[]> =>
  allValues<string>(q, "id", sql, params);

/**
 * The `column = $n` assignments of an UPDATE for the fields a change sets (undefined: left as it is), each value
 * (through `encode`, e.g. JSON for a jsonb column) appended to `values`, which holds the statement's other
 * parameters first. The column names are the change's typed keys, never a caller's input.
 */
export function setClauses(
  change: Readonly<Record<string, unknown>>,
  values: unknown[],
  encode: (column: string, value: unknown) => unknown = (_column, value) => value,
): string[] {
  const sets: string[] = [];
  for (const [column, value] of Object.entries(change)) {
    if (value === undefined) continue;
    values.push(encode(column, value));
    sets.push(`${column} = $${values.length}`);
  }
  return sets;
}
