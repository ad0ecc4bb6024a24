/**
 * A platform process with only the s3 role, over the store named by DATABASE_URL: the crash test kills it with
 * SIGKILL mid-upload and starts it again over the same DATA_DIR (the same host). Prints {"port": n} once listening.
 */
import pino from "pino";
import { loadConfig } from "../../src/config/config.js";
import { createPool } from "../../src/store/db.js";
import { JobQueue } from "../../src/jobs/queue.js";
import { MemoryRateLimitStore } from "../../src/http/rate-limit.js";
import { loadSecretBox } from "../../src/kernel/secrets.js";
import { createPlatform, startPlatform } from "../../src/kernel/platform.js";
import { AREAS } from "../../src/areas.js";
import type { BucketsState } from "../../src/buckets/module.js";

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
    jobs: new JobQueue(url, log, false),
    operatorToken: "x".repeat(32),
    log,
    env,
    secrets,
  },
  AREAS,
);
await startPlatform(platform, { schedule: false });
process.stdout.write(JSON.stringify({ port: platform.state<BucketsState>("buckets").gateway.address!.port }) + "\n");
