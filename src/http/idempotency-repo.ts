/** The SQL of Idempotency-Key rows (idempotency.ts, idempotent-change.ts): claims, stored answers, committed results. */
import { anyRows, oneRow, type Queryable } from "../store/db.js";

export interface StoredResponse {
  state: "running" | "done";
  request_hash: string;
  response_status: number | null;
  response_headers: Record<string, string> | null;
  response_body: string | null;
  locked: boolean;
}

/**
 * Claims (owner, key) for this request: a new row, or a running one of the same request whose lock ran out or whose
 * process is gone (its lease lock is free, tried for this statement only). Whether this claimed it.
 */
export async function claimKey(
  q: Queryable,
  k: { owner: string; key: string; hash: string; lockMs: number; processId: string | null },
): Promise<boolean> {
  return anyRows(
    q,
    `INSERT INTO idempotency_keys (owner, key, request_hash, state, locked_until, process_id)
     VALUES ($1, $2, $3, 'running', now() + $4 * interval '1 millisecond', $5)
     ON CONFLICT (owner, key) DO UPDATE SET locked_until = EXCLUDED.locked_until, request_hash = EXCLUDED.request_hash, process_id = EXCLUDED.process_id
       WHERE idempotency_keys.state = 'running' AND idempotency_keys.request_hash = EXCLUDED.request_hash
         AND (idempotency_keys.locked_until < now()
           -- the owner's lease lock is free: that process is gone (the lock is tried for this statement only)
           OR (idempotency_keys.process_id IS DISTINCT FROM EXCLUDED.process_id
               AND pg_try_advisory_xact_lock(hashtext('process:' || idempotency_keys.process_id::text))))
     RETURNING 1`,
    [k.owner, k.key, k.hash, k.lockMs, k.processId],
  );
}

export async function storedResponse(q: Queryable, owner: string, key: string): Promise<StoredResponse | null> {
  return oneRow<StoredResponse>(
    q,
    `SELECT state, request_hash, response_status, response_headers, response_body, locked_until > now() AS locked
       FROM idempotency_keys WHERE owner = $1 AND key = $2`,
    [owner, key],
  );
}

/** After a failed answer: the key is let go, or only its lock when a create committed with it (kept for the retry). */
export async function releaseKey(q: Queryable, owner: string, key: string): Promise<void> {
  const freed = await q.query(
    "DELETE FROM idempotency_keys WHERE owner = $1 AND key = $2 AND committed_result IS NULL",
    [owner, key],
  );
  if (!freed.rowCount)
    await q.query("UPDATE idempotency_keys SET locked_until = now() WHERE owner = $1 AND key = $2", [owner, key]);
}

export async function storeResponse(
  q: Queryable,
  owner: string,
  key: string,
  r: { status: number; headers: Record<string, string>; body: string },
): Promise<void> {
  await q.query(
    `UPDATE idempotency_keys SET state = 'done', response_status = $3, response_headers = $4, response_body = $5
      WHERE owner = $1 AND key = $2`,
    [owner, key, r.status, r.headers, r.body],
  );
}

export async function recordCommittedResult(q: Queryable, owner: string, key: string, text: string): Promise<void> {
  await q.query("UPDATE idempotency_keys SET committed_result = $3 WHERE owner = $1 AND key = $2", [owner, key, text]);
}

/** Locks the key's row for the rest of the transaction; its committed result, if any. */
export async function lockCommittedResult(q: Queryable, owner: string, key: string): Promise<string | null> {
  const { rows } = await q.query<{ committed_result: string | null }>(
    "SELECT committed_result FROM idempotency_keys WHERE owner = $1 AND key = $2 FOR UPDATE",
    [owner, key],
  );
  return rows[0]?.committed_result ?? null;
}
