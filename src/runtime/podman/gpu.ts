import { execFile } from "node:child_process";
import { readdir } from "node:fs/promises";
import { RuntimeError } from "../provider.js";

/** The NVIDIA GPUs of this host: device files and, when nvidia-smi runs, their model names. */
export interface HostGpus {
  devices: string[];
  models: string[];
}

export async function detectGpus(): Promise<HostGpus> {
  const devices = (await readdir("/dev").catch(() => [] as string[]))
    .filter((d) => /^nvidia(\d+|ctl|-uvm|-uvm-tools|-modeset)$/.test(d))
    .map((d) => `/dev/${d}`);
  if (!devices.some((d) => /nvidia\d+$/.test(d))) return { devices: [], models: [] };
  const models = await new Promise<string[]>((resolve) =>
    execFile("nvidia-smi", ["--query-gpu=name", "--format=csv,noheader"], { timeout: 10_000 }, (err, stdout) =>
      resolve(
        err
          ? []
          : String(stdout)
              .split("\n")
              .map((l) => l.trim())
              .filter(Boolean),
      ),
    ),
  );
  return { devices, models };
}

const tokens = (s: string) =>
  s
    .toUpperCase()
    .split(/[^A-Z0-9]+/)
    .filter(Boolean);

/** Whether a catalog model ("A100-80GB", "L4") names the device model nvidia-smi reports ("NVIDIA A100-SXM4-80GB"). */
export function modelMatches(catalogModel: string, deviceName: string): boolean {
  const have = new Set(tokens(deviceName));
  return tokens(catalogModel).every((t) => have.has(t));
}

/**
 * The `--device` arguments giving a container the GPU it asks for, or a no_capacity RuntimeError
 * naming what is missing (503 provision_failed at the API).
 */
export function gpuArgs(gpu: string, host: HostGpus): string[] {
  if (!host.devices.some((d) => /nvidia\d+$/.test(d)))
    throw new RuntimeError(
      `This host has no GPU: the ${gpu} GPU asked for is not here (no /dev/nvidia* device).`,
      "no_capacity",
    );
  if (host.models.length && !host.models.some((m) => modelMatches(gpu, m)))
    throw new RuntimeError(`This host has no ${gpu} GPU (it has ${host.models.join(", ")}).`, "no_capacity");
  return host.devices.flatMap((d) => ["--device", d]);
}
