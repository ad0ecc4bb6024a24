/**
 * The container runtime every area that runs containers uses (pods, sandboxes, builds): chosen by
 * RUNTIME, `local` (rootful podman on this host) by default. The contract is provider.ts; the choices
 * and the Kubernetes mapping are in README.md.
 */
import { createHash } from "node:crypto";
import { ConfigError } from "../config/config.js";
import { ownerKey, type Owner } from "../kernel/owner.js";
import type { RuntimeProvider } from "./provider.js";
import { PodmanRuntime } from "./podman/runtime.js";
import type { VolumeStore } from "./volumes.js";
import { LocalVolumeStore } from "./volumes-local.js";

export * from "./provider.js";
export type { VolumeStore, VolumeUsage } from "./volumes.js";
export { INSTALL_HINT } from "./podman/runtime.js";

export const RUNTIMES = ["local"] as const;

/** one provider per runtime and binary in a process: the availability probe and CPU samples are shared by every area */
const made = new Map<string, RuntimeProvider>();

/**
 * The runtime named by RUNTIME (default `local`). PODMAN_BIN overrides the podman binary (a path that
 * does not exist makes the runtime unavailable: tests use it for the 503 runtime_unavailable answers).
 */
export function createRuntime(env: Record<string, string | undefined>): RuntimeProvider {
  const kind = env.RUNTIME || "local";
  if (!(RUNTIMES as readonly string[]).includes(kind))
    throw new ConfigError("RUNTIME", `must be one of ${RUNTIMES.join(", ")}, got "${kind}"`);
  const bin = env.PODMAN_BIN || "podman";
  const key = `${kind}\0${bin}`;
  let runtime = made.get(key);
  if (!runtime) {
    runtime = new PodmanRuntime({ bin });
    made.set(key, runtime);
  }
  return runtime;
}

/** The volumes of this host: loop-mounted ext4 images under `<dataDir>/volumes` (volumes-local.ts). */
export function createVolumeStore(dataDir: string): VolumeStore {
  return new LocalVolumeStore(dataDir);
}

/**
 * The owner's network on a host: one per owner, isolated from every other (pods and networked sandboxes of
 * the owner share it). Names are short and [a-z0-9-], as podman wants them.
 */
export const ownerNetworkName = (owner: Owner): string =>
  `plat-${createHash("sha256").update(ownerKey(owner)).digest("hex").slice(0, 16)}`;
