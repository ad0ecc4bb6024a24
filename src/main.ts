import pino from "pino";
import { ConfigError, loadConfig, type Config } from "./config/config.js";
import { buildApp } from "./app.js";
import { createPool } from "./store/db.js";
import { migrate } from "./store/migrate.js";
import { startEmbeddedServer, type EmbeddedServer } from "./store/embedded.js";
import { JobQueue } from "./jobs/queue.js";
import { MemoryRateLimitStore, RedisRateLimitStore } from "./http/rate-limit.js";
import { resolveOperatorToken } from "./operator/token.js";
import { createPlatform, startPlatform, stopPlatform } from "./kernel/platform.js";
import { AREAS } from "./areas.js";
import { loadSecretBox } from "./kernel/secrets.js";
import { EdgeChild, edgeRunsApart, ROLES_BESIDE_EDGE, type StartupMessage } from "./edge/process.js";
import { bindError } from "./kernel/components.js";

async function main(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(err.message + "\n");
      process.exit(2);
    }
    throw err;
  }
  const log = pino({ level: config.logLevel });
  const edgeApart = edgeRunsApart(process.env);
  if (edgeApart) process.env.ROLES = ROLES_BESIDE_EDGE;

  let embedded: EmbeddedServer | null = null;
  let databaseUrl = config.databaseUrl;
  if (!databaseUrl) {
    embedded = await startEmbeddedServer(config.dataDir);
    databaseUrl = embedded.url;
    log.info({ dataDir: config.dataDir }, "embedded PostgreSQL running");
  }
  const db = createPool(databaseUrl, 20);
  const applied = await migrate(db, AREAS);
  if (applied.length) log.info({ applied }, "migrations applied");

  const operator = await resolveOperatorToken(config.operatorToken, config.dataDir);
  if (operator.file)
    log.info({ path: operator.file }, operator.generated ? "operator token generated" : "operator token loaded");

  const rateLimit = config.redisUrl ? new RedisRateLimitStore(config.redisUrl) : new MemoryRateLimitStore();
  const secrets = await loadSecretBox(process.env, config.dataDir);
  if (secrets.file) log.info({ path: secrets.file }, "platform secret key in the data directory");
  const jobs = new JobQueue(databaseUrl, log);
  const platform = await createPlatform(
    {
      config,
      db,
      databaseUrl,
      rateLimit,
      jobs,
      operatorToken: operator.token,
      log,
      env: process.env,
      secrets: secrets.box,
    },
    AREAS,
  );
  const app = await buildApp(platform);
  const edgeChild = edgeApart
    ? new EdgeChild({ databaseUrl, dataDir: config.dataDir, operatorToken: operator.token, log })
    : null;
  if (edgeChild) platform.health.set("edge", () => edgeChild.status());
  try {
    await startPlatform(platform);
    // ROLES without api: a worker host that serves no HTTP
    if (platform.kernel.require("hosts").local.roles.includes("api"))
      await app.listen({ port: config.port, host: config.host }).catch((err) => {
        throw bindError("PORT", config.port, err);
      });
  } catch (err) {
    // a start that failed half way (a port taken) stops what it started, then exits (2 for configuration)
    const cleanup = async () => {
      await app.close();
      await stopPlatform(platform);
      await db.end();
      await embedded?.stop();
    };
    await Promise.race([cleanup().catch(() => {}), new Promise((r) => setTimeout(r, 15_000).unref())]);
    throw err;
  }
  // a forked process (the edge, edge/process.ts) tells its parent it serves
  tellParent({ platform: "ready" });

  let stopping = false;
  const shutdown = async (signal: string, exitCode = 0) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, "shutting down: finishing in-flight requests");
    const force = setTimeout(() => process.exit(1), 60_000);
    force.unref();
    await app.close(); // stops accepting, waits for in-flight requests
    await edgeChild?.stop();
    await stopPlatform(platform);
    await rateLimit.close();
    await db.end();
    if (embedded) await embedded.stop();
    log.info("stopped");
    process.exit(exitCode);
  };
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
  process.on("SIGINT", () => void shutdown("SIGINT"));
  // a forked edge (edge/process.ts) goes when the process that forked it is gone, even after a kill -9
  if (process.connected) process.on("disconnect", () => void shutdown("parent gone"));
  // the forked edge's first start (awaited while this process already serves): a child that cannot start, such
  // as EDGE_TLS_PORT taken, stops this process too, with the child's message and its exit code, not a restart loop
  edgeChild?.start().catch((err: Error) => {
    process.stderr.write(err.message + "\n");
    void shutdown("the edge process could not start", err instanceof ConfigError ? 2 : 1);
  });
}

/** to the process that forked this one, if any; `then` runs once the message left (or at once) */
function tellParent(message: StartupMessage, then?: () => void): void {
  if (process.send && process.connected) process.send(message, () => then?.());
  else then?.();
}

main().catch((err) => {
  const config = err instanceof ConfigError;
  const message = config ? err.message : `start-up failed: ${err instanceof Error ? err.message : String(err)}`;
  process.stderr.write(message + "\n");
  tellParent({ platform: "failed", message, exitCode: config ? 2 : 1 }, () => process.exit(config ? 2 : 1));
});
