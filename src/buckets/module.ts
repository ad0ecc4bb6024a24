import { defineArea, rowLookup } from "../kernel/area.js";
import type { HealthCheck, Platform } from "../kernel/context.js";
import { ConfigError } from "../config/config.js";
import { bindError, down, up } from "../kernel/components.js";
import * as repo from "./repo.js";
import { bucketsConfig, type BucketsConfig } from "./config.js";
import { bucketRequestMetering, bucketStorageMetering } from "./metering.js";
import { bucketRoutes } from "./routes.js";
import { BucketsService } from "./service.js";
import { FilesystemBlobStore } from "./storage/filesystem.js";
import { S3BlobStore } from "./storage/s3.js";
import type { BlobStore } from "./storage/types.js";
import { S3Gateway } from "./gateway/server.js";
import { RequestCounter, sweepOrphans } from "./gateway/upkeep.js";
import { expireUploads, foldUsageDeltas, purgeMeteredRequests } from "./gateway/repo.js";
import { bucketsOwned } from "./owned.js";
import { BUCKETS_ERROR_CODES } from "./errors.js";
import { BUCKETS_SCOPES } from "./scopes.js";

export interface BucketsState {
  config: BucketsConfig;
  store: BlobStore;
  svc: BucketsService;
  gateway: S3Gateway;
  counter: RequestCounter;
  /** upkeep (deltas folded every minute, orphan blobs swept hourly) while the gateway runs here */
  sweepTimer: NodeJS.Timeout | null;
  sweeping: Promise<void> | null;
  /** the endpoint buckets show */
  endpoint(): string;
}

/**
 * Buckets (issue 12, README: src/buckets/README.md): S3-compatible buckets and access keys through the API, an
 * S3 gateway of the platform's own on S3_PORT (on hosts with the s3 role), object bytes in a storage backend
 * (filesystem or an external S3 service), metered by stored GB-hours and by requests.
 */
export const bucketsArea = defineArea<BucketsState, BucketsConfig>({
  name: "buckets",
  errors: BUCKETS_ERROR_CODES,
  scopes: BUCKETS_SCOPES,
  tags: [{ name: "buckets", description: "S3-compatible buckets and their access keys; the S3 gateway serves them." }],
  config: bucketsConfig,
  setup: (p, config) => {
    const store: BlobStore =
      config.storage === "s3"
        ? new S3BlobStore(config.upstream!)
        : new FilesystemBlobStore(config.storageDir, p.kernel.require("hosts").local.id);
    const counter = new RequestCounter(p.db, p.log);
    const gateway = new S3Gateway({
      db: p.db,
      secrets: p.secrets,
      store,
      config,
      log: p.log,
      digests: null,
      count: (id) => counter.count(id),
    });
    const svc = new BucketsService({
      db: p.db,
      kernel: p.kernel,
      secrets: p.secrets,
      store,
      log: p.log,
      region: config.region,
    });
    p.kernel.contribute("owned", bucketsOwned(), "bucket");
    const endpoint = () => {
      if (config.publicUrl) return config.publicUrl;
      const port = gateway.address?.port ?? config.port;
      const host = config.host === "0.0.0.0" || config.host === "::" ? "127.0.0.1" : config.host;
      return `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
    };
    return { config, store, svc, gateway, counter, sweepTimer: null, sweeping: null, endpoint };
  },
  routes: (_app, _ctx, s) => bucketRoutes(s.svc, { url: s.endpoint, region: s.config.region, domain: s.config.domain }),
  metering: () => [bucketStorageMetering(), bucketRequestMetering()],
  instances: (p) =>
    rowLookup(
      "buckets",
      (owner, ref) => repo.findBucket(p.db, owner, ref),
      (row) => row.name,
    ),
  health: (p, s): Record<string, HealthCheck> => {
    if (!p.kernel.require("hosts").local.roles.includes("s3")) return {};
    return {
      s3: () => {
        const a = s.gateway.address;
        return a ? up(`${a.address}:${a.port}`) : down(`the S3 gateway is not listening (S3_PORT ${s.config.port})`);
      },
    };
  },
  // the gateway runs where the s3 role is; S3_PORT in use is a configuration error that stops start-up (exit 2),
  // any other failure leaves the API working and says why (readiness shows s3 down)
  start: async (p, s) => {
    if (!p.kernel.require("hosts").local.roles.includes("s3")) return;
    const cleared = await s.store.clearTemp();
    if (cleared) p.log.info({ cleared }, "removed temp files of uploads interrupted by the last stop");
    try {
      const address = await s.gateway.start(s.config.host, s.config.port);
      p.log.info({ address, storage: s.config.storage }, "S3 gateway listening");
    } catch (err) {
      const taken = bindError("S3_PORT", s.config.port, err);
      if (taken instanceof ConfigError) throw taken;
      p.log.error({ err }, "the S3 gateway did not start; buckets keep working through the API only");
      return;
    }
    s.counter.start();
    let minutes = 0;
    const tick = () => {
      s.sweeping ??= upkeep(p, s, minutes++ % 60 === 0).finally(() => (s.sweeping = null));
    };
    tick();
    s.sweepTimer = setInterval(tick, 60_000);
    s.sweepTimer.unref();
  },
  stop: async (_p, s) => {
    if (s.sweepTimer) clearInterval(s.sweepTimer);
    s.sweepTimer = null;
    await s.sweeping;
    await s.gateway.stop();
    await s.counter.stop();
  },
});

/**
 * Every minute: fold the size deltas; every hour (and at start): abort forgotten multipart uploads, sweep orphan
 * blobs (theirs among them), purge billed request counts.
 */
async function upkeep(p: Platform, s: BucketsState, sweep: boolean): Promise<void> {
  try {
    await foldUsageDeltas(p.db);
    if (!sweep) return;
    const expired = s.config.uploadExpiryDays ? await expireUploads(p.db, s.config.uploadExpiryDays) : 0;
    if (expired) p.log.info({ expired }, "aborted multipart uploads left unfinished");
    const removed = await sweepOrphans(p.db, s.store, s.config.orphanGraceSeconds);
    if (removed) p.log.info({ removed }, "removed blobs no object names");
    await purgeMeteredRequests(p.db);
  } catch (err) {
    p.log.warn({ err }, "bucket upkeep failed; it runs again in a minute");
  }
}
