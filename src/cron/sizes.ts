import { ApiError } from "../http/errors.js";
import type { Limits } from "../runtime/provider.js";

/** runs are metered and admitted under their own kind, priced like pods of the same size (catalog/prices.json) */
export const CRON_RUN_KIND = "cron-run";

/** the CPU sizes of pods (src/apps/sizes.ts), without GPUs: a run is a batch container like a pod's */
const SIZES: Record<string, { vcpu: number; memoryMb: number }> = {
  nano: { vcpu: 0.25, memoryMb: 256 },
  micro: { vcpu: 0.5, memoryMb: 512 },
  "cpu-small": { vcpu: 1, memoryMb: 2048 },
  "cpu-medium": { vcpu: 2, memoryMb: 4096 },
};
export const CRON_SIZES = Object.keys(SIZES);

export function checkCronSize(size: string): void {
  if (!SIZES[size])
    throw new ApiError("bad_size", `Unknown size "${size}"; cron jobs run as ${CRON_SIZES.join(", ")}.`);
}

export function limitsOfCronSize(size: string): Limits {
  const s = SIZES[size] ?? SIZES.nano;
  return { cpus: s.vcpu, memoryMb: s.memoryMb, pids: 512 };
}
