/**
 * A whole platform process (API roles off the wire: only its workers matter) over the store named by DATABASE_URL:
 * the webhook crash test kills it with SIGKILL mid-delivery and starts another. Prints {"ready":true} once started.
 */
import pino from "pino";
import { loadConfig } from "../../src/config/config.js";
import { createPool } from "../../src/store/db.js";
import { JobQueue } from "../../src/jobs/queue.js";
import { MemoryRateLimitStore } from "../../src/http/rate-limit.js";
import { loadSecretBox } from "../../src/kernel/secrets.js";
import { createPlatform, startPlatform } from "../../src/kernel/platform.js";
import { AREAS } from "../../src/areas.js";

const env = process.env;
const config = loadConfig(env);
const url = env.DATABASE_URL!;
const db = createPool(url, 5);
const log = pino({ level: "silent" });
const secrets = (await loadSecretBox(env, config.dataDir)).box;
const platform = await createPlatform(
  {
    config,
    db,
    databaseUrl: url,
    rateLimit: new MemoryRateLimitStore(),
    jobs: new JobQueue(url, log, true),
    operatorToken: "x".repeat(32),
    log,
    env,
    secrets,
  },
  AREAS,
);
await startPlatform(platform, { schedule: false });
process.stdout.write(JSON.stringify({ ready: true }) + "\n");
