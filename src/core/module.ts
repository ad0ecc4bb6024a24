import { defineArea } from "../kernel/area.js";
import type { Db } from "../store/db.js";
import * as repo from "./repo.js";

/** Stored responses are replayed for 24 hours, then forgotten. */
export async function expireIdempotencyKeys(db: Db): Promise<void> {
  await repo.deleteIdempotencyKeysOlderThan(db, 24);
}

/** Maintenance of the shared core tables (idempotency keys). */
export const coreArea = defineArea({
  name: "core",
  jobs: (p) => [
    { name: "core.expire-idempotency-keys", cron: "*/10 * * * *", handler: () => expireIdempotencyKeys(p.db) },
  ],
});
