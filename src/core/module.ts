import { defineArea } from "../kernel/area.js";
import type { Db } from "../store/db.js";

/** Stored responses are replayed for 24 hours, then forgotten. */
export async function expireIdempotencyKeys(db: Db): Promise<void> {
  await db.query("DELETE FROM idempotency_keys WHERE created_at < now() - interval '24 hours'");
}

/** Maintenance of the shared core tables (idempotency keys). */
export const coreArea = defineArea({
  name: "core",
  jobs: (p) => [{ name: "core.expire-idempotency-keys", cron: "*/10 * * * *", handler: () => expireIdempotencyKeys(p.db) }],
});
