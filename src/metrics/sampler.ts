import type { FastifyBaseLogger } from "fastify";
import type { Db } from "../store/db.js";
import type { ContainerCounters, RuntimeProvider } from "../runtime/provider.js";
import { podsToSample } from "../apps/public.js";
import { addSamples, type PodSample } from "./repo.js";

export interface SamplerDeps {
  db: Db;
  runtime: RuntimeProvider;
  hostId: string;
  log: FastifyBaseLogger;
}

/**
 * This host's per-minute pod sampler: one `podman stats` call for every pod running here, one insert. CPU is the
 * percent of one CPU over the time since this process's previous sample of the same container (its cumulative
 * counters, kept in memory); a first sample (a new container, a restarted platform) takes podman's average since
 * the container started. A pass run twice in a minute replaces that minute's row.
 */
export class PodSampler {
  private previous = new Map<string, ContainerCounters>();
  private running: Promise<number> | null = null;

  constructor(private readonly deps: SamplerDeps) {}

  /** one pass (a pass still running is joined); resolves to the number of pods sampled */
  sample(now = Date.now()): Promise<number> {
    this.running ??= this.pass(now).finally(() => (this.running = null));
    return this.running;
  }

  private async pass(now: number): Promise<number> {
    const pods = await podsToSample(this.deps.db, this.deps.hostId);
    const counters =
      pods.length && this.deps.runtime.statsMany
        ? await this.deps.runtime.statsMany(pods.map((p) => p.container)).catch((err: unknown) => {
            this.deps.log.warn({ err }, "pod metrics: the runtime's stats failed; restarts only this minute");
            return new Map<string, ContainerCounters>();
          })
        : new Map<string, ContainerCounters>();
    const minute = now - (now % 60_000);
    const rows: PodSample[] = pods.map((p) => {
      const c = counters.get(p.container);
      const prev = this.previous.get(p.container);
      let cpu: number | null = null;
      if (c) {
        cpu =
          prev && c.atNano > prev.atNano && c.cpuNano >= prev.cpuNano
            ? ((c.cpuNano - prev.cpuNano) / (c.atNano - prev.atNano)) * 100
            : c.cpuPercentSinceStart;
        cpu = Math.round(cpu * 100) / 100;
      }
      return {
        podId: p.id,
        minute,
        owner: p.owner,
        cpuPercent: cpu,
        memoryBytes: c?.memoryBytes ?? null,
        memoryLimitBytes: c?.memoryLimitBytes ?? null,
        restartCount: p.restartCount,
        netInBytes: c?.netInBytes ?? null,
        netOutBytes: c?.netOutBytes ?? null,
        groupId: p.groupId,
      };
    });
    // only the containers sampled now are kept: a removed container's counters go with it
    this.previous = new Map([...counters].filter(([name]) => pods.some((p) => p.container === name)));
    await addSamples(this.deps.db, rows);
    return rows.length;
  }
}
