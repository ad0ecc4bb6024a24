import type { HealthCheck, Infra } from "./context.js";
import { up, within } from "./components.js";
import { ping } from "../store/db.js";

/** The components every process has: the control store, the job queue, and Redis where REDIS_URL is set. */
export function infraHealth(infra: Infra): Map<string, HealthCheck> {
  const { db, jobs, rateLimit } = infra;
  const checks = new Map<string, HealthCheck>([
    ["store", () => within(2000, "the control store", async () => (await ping(db), up()))],
    ["jobs", () => jobs.health()],
  ]);
  const redis = rateLimit.ping?.bind(rateLimit);
  if (infra.config.redisUrl && redis)
    checks.set("redis", () => within(2000, "Redis", async () => (await redis(), up())));
  return checks;
}
