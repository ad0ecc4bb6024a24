import { createRequire } from "node:module";
import type * as IORedis from "ioredis";
import type { Redis } from "ioredis";

export interface WindowCount {
  count: number;
  /** milliseconds until the current window ends */
  resetMs: number;
}

/** Counts requests per caller in fixed one-second windows. */
export interface RateLimitStore {
  hit(key: string): Promise<WindowCount>;
  close(): Promise<void>;
  /** a shared store answers (readiness); an in-process one has nothing to ask */
  ping?(): Promise<void>;
}

const WINDOW_MS = 1000;

/** One process: a map of the current window's counters, dropped when the window turns. */
export class MemoryRateLimitStore implements RateLimitStore {
  private window = 0;
  private counts = new Map<string, number>();

  async hit(key: string): Promise<WindowCount> {
    const now = Date.now();
    const window = Math.floor(now / WINDOW_MS);
    if (window !== this.window) {
      this.window = window;
      this.counts.clear();
    }
    const count = (this.counts.get(key) ?? 0) + 1;
    this.counts.set(key, count);
    return { count, resetMs: (window + 1) * WINDOW_MS - now };
  }

  async close(): Promise<void> {}
}

/** Several API processes: one counter per caller and window in Redis, so they enforce one limit together. */
export class RedisRateLimitStore implements RateLimitStore {
  private redis: Redis;

  constructor(url: string) {
    // auto-pipelining sends the hits of concurrent requests in one round trip
    // ioredis loads only in a process that shares its limits through Redis
    const { Redis: RedisClient } = createRequire(import.meta.url)("ioredis") as typeof IORedis;
    this.redis = new RedisClient(url, {
      maxRetriesPerRequest: 1,
      enableOfflineQueue: true,
      lazyConnect: false,
      enableAutoPipelining: true,
    });
    this.redis.on("error", () => {}); // surfaced per request through hit()
    // one script call per hit: count, and set the expiry only when the window's counter is new
    this.redis.defineCommand("rateHit", {
      numberOfKeys: 1,
      lua: "local n = redis.call('INCR', KEYS[1]) if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end return n",
    });
  }

  async hit(key: string): Promise<WindowCount> {
    const now = Date.now();
    const window = Math.floor(now / WINDOW_MS);
    const redisKey = `rl:${key}:${window}`;
    const count = Number(
      await (this.redis as unknown as { rateHit: (k: string, ttl: number) => Promise<number> }).rateHit(
        redisKey,
        WINDOW_MS * 2,
      ),
    );
    return { count, resetMs: (window + 1) * WINDOW_MS - now };
  }

  async ping(): Promise<void> {
    await this.redis.ping();
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}

/**
 * Headers of draft-ietf-httpapi-ratelimit-headers-09: RateLimit-Policy announces the quota (q) per
 * window (w, seconds); RateLimit gives what remains (r) and seconds to reset (t).
 */
export function rateLimitHeaders(limit: number, hit: WindowCount): Record<string, string> {
  const remaining = Math.max(0, limit - hit.count);
  const reset = Math.max(1, Math.ceil(hit.resetMs / 1000));
  return {
    "ratelimit-policy": policyHeader(limit),
    ratelimit: `"default";r=${remaining};t=${reset}`,
  };
}

// the policy is the same on every answer of a process: built once
let policy: { limit: number; text: string } | null = null;
const policyHeader = (limit: number): string =>
  policy?.limit === limit ? policy.text : (policy = { limit, text: `"default";q=${limit};w=${WINDOW_MS / 1000}` }).text;
