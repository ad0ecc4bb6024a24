/** The SQL of secret_keys (secrets.ts): which keys sealed this store's secrets. */
import type { Queryable } from "../store/db.js";

export async function secretKeyIds(q: Queryable): Promise<string[]> {
  const { rows } = await q.query<{ kid: string }>("SELECT kid FROM secret_keys");
  return rows.map((r) => r.kid);
}

export async function recordSecretKey(q: Queryable, kid: string): Promise<void> {
  await q.query("INSERT INTO secret_keys (kid) VALUES ($1) ON CONFLICT DO NOTHING", [kid]);
}
