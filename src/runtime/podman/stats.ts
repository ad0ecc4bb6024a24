import type { ContainerCounters } from "../provider.js";

/** Cumulative counters from `podman stats --no-stream --format "{{json .ContainerStats}}"`, one line per container. */
export function parseCounters(stdout: string): Map<string, ContainerCounters> {
  const out = new Map<string, ContainerCounters>();
  for (const line of stdout.split("\n")) {
    if (!line.trim()) continue;
    const s = JSON.parse(line) as {
      Name: string;
      CPU: number;
      CPUNano: number;
      SystemNano: number;
      MemUsage: number;
      MemLimit: number;
      NetInput?: number;
      NetOutput?: number;
    };
    if (!s.SystemNano) continue; // not running
    out.set(s.Name, {
      cpuNano: s.CPUNano,
      atNano: s.SystemNano,
      cpuPercentSinceStart: s.CPU,
      memoryBytes: s.MemUsage,
      memoryLimitBytes: s.MemLimit,
      netInBytes: s.NetInput ?? 0,
      netOutBytes: s.NetOutput ?? 0,
    });
  }
  return out;
}
