import os from "node:os";
import { existsSync, readFileSync } from "node:fs";
import type { Limits } from "../runtime/provider.js";

/**
 * Pod sizes: two small shared sizes of our own (nano is free, like a dev database) and the CPU and GPU
 * SKUs of /v1/gpus (catalog/gpus.json), so what the catalog lists is what a pod can ask for. Prices are
 * in catalog/prices.json under resources.pod (test/apps/sizes.test.ts keeps the two files in step).
 */
export interface PodSize {
  id: string;
  vcpu: number;
  memoryMb: number;
  gpu: string | null;
}

const SHARED: PodSize[] = [
  { id: "nano", vcpu: 0.25, memoryMb: 256, gpu: null },
  { id: "micro", vcpu: 0.5, memoryMb: 512, gpu: null },
];

interface Sku {
  id: string;
  vcpu: number;
  memory_gb: number;
  gpu_model: string | null;
}

let cached: PodSize[] | null = null;
export function podSizes(gpuCatalogFile: string): PodSize[] {
  if (cached) return cached;
  const skus = (JSON.parse(readFileSync(gpuCatalogFile, "utf8")) as { skus: Sku[] }).skus;
  cached = [
    ...SHARED,
    ...skus.map((s) => ({ id: s.id, vcpu: s.vcpu, memoryMb: s.memory_gb * 1024, gpu: s.gpu_model })),
  ];
  return cached;
}

export const DEFAULT_POD_SIZE = "nano";
export const POD_KIND = "pod";

/** The container limits of a size; pids are bounded so a fork bomb stays inside its pod. */
export function limitsOf(size: PodSize): Limits {
  return { cpus: size.vcpu, memoryMb: size.memoryMb, pids: 512, gpu: size.gpu };
}

/**
 * Whether this host can ever give a container the size (CPU count and memory); a size larger than the
 * machine is refused at creation with provision_failed instead of failing in the runtime later.
 */
export function hostFits(size: PodSize): string | null {
  const cpus = os.cpus().length;
  const memMb = Math.floor(os.totalmem() / 1024 / 1024);
  // NVIDIA devices are how the runtime would hand a GPU to a container; none here means no GPU SKU fits
  if (size.gpu && !existsSync("/dev/nvidia0")) return `size ${size.id} needs a ${size.gpu} GPU; this host has none`;
  if (size.vcpu > cpus) return `size ${size.id} needs ${size.vcpu} vCPU; this host has ${cpus}`;
  if (size.memoryMb > memMb) return `size ${size.id} needs ${size.memoryMb} MiB of memory; this host has ${memMb}`;
  return null;
}
