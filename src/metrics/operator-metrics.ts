import type { AppContext } from "../kernel/context.js";
import type { ComponentStatus } from "../kernel/components.js";
import { jobQueueDepth, latestSamples } from "./repo.js";
import { renderPrometheus, type Family } from "./prometheus.js";
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

/**
 * The operator's scrape (GET /v1/operator/metrics): the platform's health, each pod's and database's latest sample
 * and each app's recent traffic, as text.
 */
export async function operatorMetrics(ctx: AppContext): Promise<string> {
  const [checked, depth, samples, databases, traffic] = await Promise.all([
    components(ctx),
    jobQueueDepth(ctx.db),
    latestSamples(ctx.db, RECENT_MS),
    latestDatabaseSamples(ctx.db, RECENT_MS),
    recentTraffic(ctx.db, ["pod", "group", "site"], RECENT_MS),
  ]);
  const database = (d: (typeof databases)[number]) => ({
    database: d.databaseId,
    owner: `${d.owner.kind}:${d.owner.id}`,
  });
  const app = (t: (typeof traffic)[number]) => ({ kind: t.kind, app: t.id, owner: `${t.owner.kind}:${t.owner.id}` });
  const gauge = (name: string, help: string, values: { labels: Record<string, string>; value: number | null }[]) => ({
    name,
    help,
    type: "gauge" as const,
    samples: values.filter((v): v is { labels: Record<string, string>; value: number } => v.value !== null),
  });
  const pod = (s: (typeof samples)[number]) => ({ pod: s.podId, owner: `${s.owner.kind}:${s.owner.id}` });
  const families: Family[] = [
    {
      name: "platform_component_up",
      help: "1 when the component is up, 0 when down (off components are not run by this process).",
      type: "gauge",
      samples: checked
        .filter(([, status]) => status !== "off")
        .map(([component, status]) => ({ labels: { component }, value: status === "up" ? 1 : 0 })),
    },
    {
      name: "platform_job_queue_waiting",
      help: "Jobs created or waiting for a retry, per queue.",
      type: "gauge",
      samples: depth.map((d) => ({ labels: { queue: d.queue }, value: d.waiting })),
    },
    {
      name: "platform_pod_cpu_percent",
      help: "Percent of one CPU over the pod's latest sampled minute.",
      type: "gauge",
      samples: samples.filter((s) => s.cpuPercent !== null).map((s) => ({ labels: pod(s), value: s.cpuPercent! })),
    },
    {
      name: "platform_pod_memory_bytes",
      help: "Memory in use at the pod's latest sample.",
      type: "gauge",
      samples: samples.filter((s) => s.memoryBytes !== null).map((s) => ({ labels: pod(s), value: s.memoryBytes! })),
    },
    {
      name: "platform_pod_restarts_total",
      help: "Restarts of the pod since it was created.",
      type: "counter",
      samples: samples.map((s) => ({ labels: pod(s), value: s.restartCount })),
    },
    gauge(
      "platform_database_connections",
      "Client sessions at the database's latest sample.",
      databases.map((d) => ({ labels: database(d), value: d.connections })),
    ),
    gauge(
      "platform_database_size_bytes",
      "The database server's size on disk at its latest sample.",
      databases.map((d) => ({ labels: database(d), value: d.sizeBytes })),
    ),
    gauge(
      "platform_database_replication_lag_bytes",
      "With HA: how far the standby's replay is behind, at the latest sample.",
      databases.map((d) => ({ labels: database(d), value: d.replicationLagBytes })),
    ),
    gauge(
      "platform_database_base_backup_age_seconds",
      "Age of the database's newest full backup at its latest sample.",
      databases.map((d) => ({ labels: database(d), value: d.baseBackupAgeSeconds })),
    ),
    gauge(
      "platform_database_archived_wal_age_seconds",
      "Age of the database's last archived WAL segment at its latest sample.",
      databases.map((d) => ({ labels: database(d), value: d.archivedWalAgeSeconds })),
    ),
    gauge(
      "platform_app_requests_5m",
      "Requests the edge answered for the app (pod, group or site) over the last 5 minutes.",
      traffic.map((t) => ({ labels: app(t), value: t.requests })),
    ),
    gauge(
      "platform_app_errors_5xx_5m",
      "5xx answers of the app over the last 5 minutes.",
      traffic.map((t) => ({ labels: app(t), value: t.status5xx })),
    ),
    gauge(
      "platform_app_bytes_out_5m",
      "Bytes the edge sent for the app over the last 5 minutes.",
      traffic.map((t) => ({ labels: app(t), value: t.bytesOut })),
    ),
  ];
  return renderPrometheus(families);
}
