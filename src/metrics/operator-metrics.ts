import { Counter, Gauge, Registry, collectDefaultMetrics } from "prom-client";
import type { AppContext } from "../kernel/context.js";
import type { ComponentStatus } from "../kernel/components.js";
import { jobQueueDepth, latestSamples } from "./repo.js";
import { latestDatabaseSamples } from "./series-repo.js";
import { recentTraffic } from "../edge/public.js";

/** how far back the latest sample or the traffic counted reaches */
const RECENT_MS = 5 * 60_000;

/** every component's readiness, a throwing check counted down (as /v1/health/ready does) */
async function components(ctx: AppContext): Promise<[string, ComponentStatus["status"]][]> {
  return Promise.all(
    [...ctx.health].map(async ([name, check]): Promise<[string, ComponentStatus["status"]]> => {
      try {
        return [name, (await check()).status];
      } catch {
        return [name, "down"];
      }
    }),
  );
}

/** what one scrape reads from the store and the health checks, once for every family */
async function readSnapshot(ctx: AppContext) {
  const [checked, depth, pods, databases, traffic] = await Promise.all([
    components(ctx),
    jobQueueDepth(ctx.db),
    latestSamples(ctx.db, RECENT_MS),
    latestDatabaseSamples(ctx.db, RECENT_MS),
    recentTraffic(ctx.db, ["pod", "group", "site"], RECENT_MS),
  ]);
  return { checked, depth, pods, databases, traffic };
}
type Snapshot = Awaited<ReturnType<typeof readSnapshot>>;
type Sample = { labels: Record<string, string>; value: number | null };

const ownerLabel = (o: { kind: string; id: string }) => `${o.kind}:${o.id}`;
const pod = (s: Snapshot["pods"][number]) => ({ pod: s.podId, owner: ownerLabel(s.owner) });
const database = (d: Snapshot["databases"][number]) => ({ database: d.databaseId, owner: ownerLabel(d.owner) });
const app = (t: Snapshot["traffic"][number]) => ({ kind: t.kind, app: t.id, owner: ownerLabel(t.owner) });

/**
 * The operator's scrape (GET /v1/operator/metrics) through prom-client: one Registry per app instance (never the
 * library's global one, so two platforms in one process never share series), with the process's own metrics
 * (`collectDefaultMetrics`) and gauges whose `collect()` reads the store at scrape time. One scrape reads the store
 * once (a snapshot the families share); scrapes run one after another, since a family's values are reset and set
 * on the shared registry.
 */
export class OperatorMetrics {
  readonly contentType: string;
  private readonly registry = new Registry();
  private current: Promise<Snapshot> | null = null;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(ctx: AppContext) {
    this.contentType = this.registry.contentType;
    collectDefaultMetrics({ register: this.registry });
    const snapshot = () => (this.current ??= readSnapshot(ctx));
    const family = (name: string, help: string, labelNames: string[], values: (s: Snapshot) => Sample[]) =>
      new Gauge({
        name,
        help,
        labelNames,
        registers: [this.registry],
        async collect() {
          const s = await snapshot();
          this.reset();
          for (const v of values(s)) if (v.value !== null) this.set(v.labels, v.value);
        },
      });
    family(
      "platform_component_up",
      "1 when the component is up, 0 when down (off components are not run by this process).",
      ["component"],
      (s) =>
        s.checked
          .filter(([, status]) => status !== "off")
          .map(([component, status]) => ({ labels: { component }, value: status === "up" ? 1 : 0 })),
    );
    family("platform_ready", "1 when no component is down (what GET /v1/health/ready answers 200 for).", [], (s) => [
      { labels: {}, value: s.checked.some(([, status]) => status === "down") ? 0 : 1 },
    ]);
    family("platform_job_queue_waiting", "Jobs created or waiting for a retry, per queue.", ["queue"], (s) =>
      s.depth.map((d) => ({ labels: { queue: d.queue }, value: d.waiting })),
    );
    const podLabels = ["pod", "owner"];
    family("platform_pod_cpu_percent", "Percent of one CPU over the pod's latest sampled minute.", podLabels, (s) =>
      s.pods.map((p) => ({ labels: pod(p), value: p.cpuPercent })),
    );
    family("platform_pod_memory_bytes", "Memory in use at the pod's latest sample.", podLabels, (s) =>
      s.pods.map((p) => ({ labels: pod(p), value: p.memoryBytes })),
    );
    const podCounter = (name: string, help: string, value: (p: Snapshot["pods"][number]) => number | null) =>
      new Counter({
        name,
        help,
        labelNames: podLabels,
        registers: [this.registry],
        async collect() {
          const s = await snapshot();
          this.reset();
          for (const p of s.pods) {
            const v = value(p);
            if (v !== null) this.inc(pod(p), v);
          }
        },
      });
    podCounter("platform_pod_restarts_total", "Restarts of the pod since it was created.", (p) => p.restartCount);
    podCounter(
      "platform_pod_network_receive_bytes_total",
      "Bytes the pod's container received, as the runtime counts them at the latest sample (0 after a restart).",
      (p) => p.netInBytes,
    );
    podCounter(
      "platform_pod_network_transmit_bytes_total",
      "Bytes the pod's container sent, as the runtime counts them at the latest sample (0 after a restart).",
      (p) => p.netOutBytes,
    );
    const dbLabels = ["database", "owner"];
    const databaseFamily = (name: string, help: string, value: (d: Snapshot["databases"][number]) => number | null) =>
      family(name, help, dbLabels, (s) => s.databases.map((d) => ({ labels: database(d), value: value(d) })));
    databaseFamily(
      "platform_database_connections",
      "Client sessions at the database's latest sample.",
      (d) => d.connections,
    );
    databaseFamily(
      "platform_database_size_bytes",
      "The database server's size on disk at its latest sample.",
      (d) => d.sizeBytes,
    );
    databaseFamily(
      "platform_database_replication_lag_bytes",
      "With HA: how far the standby's replay is behind, at the latest sample.",
      (d) => d.replicationLagBytes,
    );
    databaseFamily(
      "platform_database_base_backup_age_seconds",
      "Age of the database's newest full backup at its latest sample.",
      (d) => d.baseBackupAgeSeconds,
    );
    databaseFamily(
      "platform_database_archived_wal_age_seconds",
      "Age of the database's last archived WAL segment at its latest sample.",
      (d) => d.archivedWalAgeSeconds,
    );
    const appLabels = ["kind", "app", "owner"];
    const trafficFamily = (name: string, help: string, value: (t: Snapshot["traffic"][number]) => number) =>
      family(name, help, appLabels, (s) => s.traffic.map((t) => ({ labels: app(t), value: value(t) })));
    trafficFamily(
      "platform_app_requests_5m",
      "Requests the edge answered for the app (pod, group or site) over the last 5 minutes.",
      (t) => t.requests,
    );
    trafficFamily("platform_app_errors_5xx_5m", "5xx answers of the app over the last 5 minutes.", (t) => t.status5xx);
    trafficFamily(
      "platform_app_bytes_out_5m",
      "Bytes the edge sent for the app over the last 5 minutes.",
      (t) => t.bytesOut,
    );
  }

  /** the text of one scrape: reads the store once, then renders every family */
  scrape(): Promise<string> {
    const run = async () => {
      this.current = null;
      try {
        return await this.registry.metrics();
      } finally {
        this.current = null;
      }
    };
    const result = this.queue.then(run, run);
    this.queue = result.catch(() => undefined);
    return result;
  }
}
