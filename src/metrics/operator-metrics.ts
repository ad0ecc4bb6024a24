import type { AppContext } from "../kernel/context.js";
import type { ComponentStatus } from "../kernel/components.js";
import { jobQueueDepth, latestSamples } from "./repo.js";
import { renderPrometheus, type Family } from "./prometheus.js";

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

/** The operator's scrape (GET /v1/operator/metrics): the platform's health and each pod's latest sample, as text. */
export async function operatorMetrics(ctx: AppContext): Promise<string> {
  const [checked, depth, samples] = await Promise.all([
    components(ctx),
    jobQueueDepth(ctx.db),
    latestSamples(ctx.db, 5 * 60_000),
  ]);
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
  ];
  return renderPrometheus(families);
}
