import { fileURLToPath } from "node:url";
import { defineArea } from "../kernel/area.js";
import { int } from "../config/config.js";
import { outboundFor } from "../net/outbound.js";
import { EVENTS_ERROR_CODES } from "./errors.js";
import { EVENTS_SCOPES } from "./scopes.js";
import { eventRoutes } from "./routes.js";
import { webhookRoutes } from "./webhook-routes.js";
import { EventHub } from "./hub.js";
import { deleteEventsBefore } from "./repo.js";
import { inTransaction } from "../store/db.js";
import { orgWebhookAdminsGuard } from "./guard.js";
import { createDeliverer, DELIVER_JOB, type Deliverer, type DeliveryConfig } from "./delivery.js";
import { webhookService, type WebhookService } from "./webhook-service.js";

export interface EventsConfig {
  delivery: DeliveryConfig;
  /** events (with their deliveries and attempts) older than this are deleted by the retention job */
  retentionDays: number;
  streamMaxMs: number;
  concurrency: number;
}

export interface EventsState {
  hub: EventHub;
  deliverer: Deliverer;
  webhooks: WebhookService;
  config: EventsConfig;
  stopWorker: (() => void) | null;
}

const HELD_RETRY_MS = 20;
export const RETENTION_JOB = "events.retention";
const RETENTION_BATCH = 5000;

/** Events, webhooks and the live stream (issue 31): src/events/README.md. */
export const eventsArea = defineArea<EventsState, EventsConfig>({
  name: "events",
  errors: EVENTS_ERROR_CODES,
  scopes: EVENTS_SCOPES,
  migrations: fileURLToPath(new URL("./migrations/", import.meta.url)),
  tags: [
    { name: "events", description: "What happened to the caller's resources: a list and a live stream." },
    { name: "webhooks", description: "Signed deliveries of events to the caller's endpoints, retried for days." },
  ],
  config: (env) => ({
    delivery: {
      retryBaseSeconds: int(env, "WEBHOOK_RETRY_BASE_SECONDS", 60, 1, 3600),
      maxDelaySeconds: int(env, "WEBHOOK_RETRY_MAX_SECONDS", 6 * 3600, 1, 86_400),
      retryWindowSeconds: int(env, "WEBHOOK_RETRY_WINDOW_SECONDS", 3 * 86_400, 1, 30 * 86_400),
      disableAfterSeconds: int(env, "WEBHOOK_DISABLE_AFTER_SECONDS", 5 * 86_400, 1, 60 * 86_400),
      timeoutMs: int(env, "WEBHOOK_TIMEOUT_MS", 10_000, 100, 60_000),
      claimSeconds: int(env, "WEBHOOK_CLAIM_SECONDS", 30, 1, 600),
      sweepMs: int(env, "WEBHOOK_SWEEP_MS", 5000, 100, 600_000),
    },
    streamMaxMs: int(env, "EVENT_STREAM_MAX_SECONDS", 1800, 1, 86_400) * 1000,
    retentionDays: int(env, "EVENT_RETENTION_DAYS", 30, 1, 3650),
    concurrency: int(env, "WEBHOOK_CONCURRENCY", 32, 1, 256),
  }),
  setup: (p, config) => {
    p.kernel.provide("orgWebhookAdmins", orgWebhookAdminsGuard(p.kernel, p.db));
    const hub = new EventHub(p.databaseUrl, p.log);
    const outbound = outboundFor(p.env);
    const deliverer = createDeliverer({
      db: p.db,
      jobs: p.jobs,
      secrets: p.secrets,
      outbound,
      mailer: () => p.kernel.mailer,
      log: p.log,
      config: config.delivery,
      concurrency: config.concurrency,
    });
    const webhooks = webhookService({ db: p.db, secrets: p.secrets, outbound, jobs: p.jobs });
    return { hub, deliverer, webhooks, config, stopWorker: null };
  },
  routes: (_app, p, s) => [...eventRoutes(p.db, s.hub, s.config.streamMaxMs), ...webhookRoutes(s.webhooks)],
  jobs: (p, s) => [
    {
      name: RETENTION_JOB,
      // hourly, in bounded batches of one transaction each (a large backlog never holds one long transaction)
      handler: async () => {
        const before = new Date(Date.now() - s.config.retentionDays * 86_400_000);
        let n: number;
        do n = await inTransaction(p.db, (tx) => deleteEventsBefore(tx, before, RETENTION_BATCH));
        while (n === RETENTION_BATCH);
      },
      cron: "17 * * * *",
      retryLimit: 1,
      policy: "stately",
    },
    {
      name: DELIVER_JOB,
      // retries (first attempts go out from the dispatcher): one attempt per job, the handler schedules the next
      // with back-off for 3 days, so the queue's own retries are a safety net
      handler: async (data: { delivery_id: string; manual?: boolean }) =>
        s.deliverer.deliver(data.delivery_id, data.manual === true),
      retryLimit: 3,
      expireInSeconds: 120,
      concurrency: s.config.concurrency,
    },
  ],
  // worker processes fan out: woken by every commit of events, and sweep for deliveries whose sender vanished
  start: async (p, s) => {
    if (!p.kernel.require("hosts").local.roles.includes("worker")) return;
    let running = false;
    let again = false;
    let heldTimer: NodeJS.Timeout | null = null;
    const dispatch = async () => {
      if (running) return void (again = true);
      running = true;
      try {
        do {
          again = false;
          const { held } = await s.deliverer.dispatch();
          // rows committed behind a transaction still running: their order is final soon, and that transaction's
          // commit need not notify (it may have written no event), so read again shortly instead of at the sweep
          if (held && !heldTimer)
            heldTimer = setTimeout(() => {
              heldTimer = null;
              void dispatch();
            }, HELD_RETRY_MS);
        } while (again);
      } catch (err) {
        p.log.warn({ err }, "webhook dispatch failed; the next event or sweep retries");
      } finally {
        running = false;
      }
    };
    const unsubscribe = s.hub.subscribe(() => void dispatch());
    const sweep = setInterval(() => {
      void dispatch();
      s.deliverer.sweep().catch((err) => p.log.warn({ err }, "webhook sweep failed"));
    }, s.config.delivery.sweepMs);
    sweep.unref();
    s.stopWorker = () => {
      unsubscribe();
      if (heldTimer) clearTimeout(heldTimer);
      clearInterval(sweep);
    };
    await dispatch();
  },
  stop: async (_p, s) => {
    s.stopWorker?.();
    await s.hub.close();
  },
});
