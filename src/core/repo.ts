import type { Queryable } from "../store/db.js";

export async function deleteIdempotencyKeysOlderThan(q: Queryable, hours: number): Promise<void> {
  await q.query("DELETE FROM idempotency_keys WHERE created_at < now() - make_interval(hours => $1)", [hours]);
}
